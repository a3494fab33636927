-- The execution log of a rule filtered by issue or by status (docs/automation.md#execution-log),
-- newest first, as automation_executions_rule serves it unfiltered. SKIPPED rows are
-- nearly all of the log (every rule of a trigger writes one per event whose conditions it
-- does not meet), and every evaluation writes them: both indexes leave them out, so the
-- evaluation pays nothing for them. A filter that can match SKIPPED rows reads the rule's
-- index, where they are the majority.
CREATE INDEX automation_executions_rule_issue ON automation_executions (rule_id, issue_id, created_at DESC, id DESC)
    WHERE status <> 'SKIPPED';
CREATE INDEX automation_executions_rule_status ON automation_executions (rule_id, status, created_at DESC, id DESC)
    WHERE status <> 'SKIPPED';
