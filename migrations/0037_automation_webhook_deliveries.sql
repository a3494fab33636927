-- The delivery log of the SEND_WEBHOOK action (docs/automation.md#send_webhook): one row
-- per web request a rule's run made, written in the rule's transaction with the River job
-- that sends it. The row holds what is sent (URL, body) and the secret it is signed with,
-- so a delivery being retried is not changed by an edit of its rule; no reply shows the
-- secret. No foreign key to the rule, as for automation_executions: the rule's deletion
-- deletes its log (the trigger below), and the writers run in the rule's transaction.
CREATE TABLE automation_webhook_deliveries (
    id              uuid PRIMARY KEY,
    rule_id         uuid NOT NULL,
    project_id      uuid,
    issue_id        uuid,
    event_id        uuid NOT NULL,
    url             text NOT NULL,
    secret          text NOT NULL DEFAULT '',
    payload         text NOT NULL,
    status          text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DELIVERED', 'RETRYING', 'FAILED')),
    attempts        integer NOT NULL DEFAULT 0,
    response_status integer,
    response_body   text,
    last_error      text,
    next_retry_at   timestamptz,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    last_attempt_at timestamptz,
    delivered_at    timestamptz
);
-- A rule's log newest first; retention walks its old end per rule.
CREATE INDEX automation_webhook_deliveries_rule ON automation_webhook_deliveries (rule_id, created_at DESC, id DESC);

CREATE FUNCTION automation_delete_webhook_deliveries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM automation_webhook_deliveries WHERE rule_id IN (SELECT id FROM deleted_rules);
    RETURN NULL;
END $$;
CREATE TRIGGER automation_rules_delete_webhook_deliveries AFTER DELETE ON automation_rules
    REFERENCING OLD TABLE AS deleted_rules FOR EACH STATEMENT EXECUTE FUNCTION automation_delete_webhook_deliveries();

-- SEND_WEBHOOK joins the action types.
ALTER TABLE automation_actions DROP CONSTRAINT automation_actions_type_check;
ALTER TABLE automation_actions ADD CONSTRAINT automation_actions_type_check CHECK (type IN ('SET_STATUS', 'SET_ASSIGNEE',
    'SET_PRIORITY', 'SEND_NOTIFICATION', 'CREATE_COMMENT', 'CREATE_SUBTASK', 'SEND_WEBHOOK'));
