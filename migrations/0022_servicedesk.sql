-- Service desk: one desk per project, tickets (issues submitted from outside), SLA
-- policies with escalation rules, the once-only record of every SLA breach and
-- escalation, incidents, and the e-mail messages already ingested.

-- An address routes incoming e-mail to one desk, so it belongs to one desk at most
-- (compared case-insensitively, as mail systems compare them).
CREATE TABLE service_desks (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id    uuid NOT NULL CONSTRAINT service_desks_project_key UNIQUE REFERENCES projects (id) ON DELETE CASCADE,
    email_address varchar(255),
    enabled       boolean NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX service_desks_email_key ON service_desks (lower(email_address)) WHERE email_address IS NOT NULL;

-- A ticket is an issue of the desk's project; the row keeps where it came from.
-- response_open is true while the ticket's first-response clock still needs the breach
-- monitor's attention: the monitor closes it once a project member has answered in time
-- or the breach has been reported, so its partial index holds only the tickets it must
-- still look at, however many tickets the desk has seen.
CREATE TABLE service_desk_tickets (
    issue_id        uuid PRIMARY KEY REFERENCES issues (id) ON DELETE CASCADE,
    service_desk_id uuid NOT NULL REFERENCES service_desks (id) ON DELETE CASCADE,
    sender_email    varchar(255),
    channel         text NOT NULL CHECK (channel IN ('WEB', 'EMAIL')),
    response_open   boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- The ticket list: newest first.
CREATE INDEX service_desk_tickets_desk ON service_desk_tickets (service_desk_id, created_at DESC, issue_id DESC);
CREATE INDEX service_desk_tickets_response ON service_desk_tickets (created_at) WHERE response_open;

-- One policy per priority and desk: the breach monitor must find exactly one.
CREATE TABLE sla_policies (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    service_desk_id    uuid NOT NULL REFERENCES service_desks (id) ON DELETE CASCADE,
    name               varchar(100) NOT NULL CHECK (btrim(name) <> ''),
    priority           text NOT NULL CHECK (priority IN ('CRITICAL', 'HIGH', 'MEDIUM', 'LOW')),
    response_minutes   integer NOT NULL CHECK (response_minutes >= 1),
    resolution_minutes integer NOT NULL CHECK (resolution_minutes >= 1),
    created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    CONSTRAINT sla_policies_desk_priority_key UNIQUE (service_desk_id, priority)
);

CREATE TABLE escalation_rules (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    sla_policy_id          uuid NOT NULL REFERENCES sla_policies (id) ON DELETE CASCADE,
    escalate_after_minutes integer NOT NULL CHECK (escalate_after_minutes >= 1),
    assignee_id            uuid REFERENCES users (id) ON DELETE SET NULL,
    notify_user_ids        uuid[] NOT NULL DEFAULT '{}',
    created_at             timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX escalation_rules_policy ON escalation_rules (sla_policy_id, created_at);

-- Every SLA breach (RESOLUTION, RESPONSE) and escalation reported, once per issue and
-- policy (and rule): the breach monitor inserts here with ON CONFLICT DO NOTHING and
-- notifies only for the rows it really inserted, so a restart, a retried job or a second
-- worker never reports one twice.
CREATE TABLE sla_reports (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    issue_id           uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    sla_policy_id      uuid NOT NULL REFERENCES sla_policies (id) ON DELETE CASCADE,
    kind               text NOT NULL CHECK (kind IN ('RESOLUTION', 'RESPONSE', 'ESCALATION')),
    escalation_rule_id uuid REFERENCES escalation_rules (id) ON DELETE CASCADE,
    reported_at        timestamptz NOT NULL,
    CONSTRAINT sla_reports_once UNIQUE NULLS NOT DISTINCT (issue_id, sla_policy_id, kind, escalation_rule_id),
    CONSTRAINT sla_reports_rule CHECK ((kind = 'ESCALATION') = (escalation_rule_id IS NOT NULL))
);
CREATE INDEX sla_reports_policy ON sla_reports (sla_policy_id);
CREATE INDEX sla_reports_rule ON sla_reports (escalation_rule_id) WHERE escalation_rule_id IS NOT NULL;

-- The breach monitor's scan: per policy, the issues of one project and priority whose
-- timer started within a range (docs/operations.md#service-desk).
CREATE INDEX issues_sla_scope ON issues (project_id, priority, sla_start_time) WHERE sla_start_time IS NOT NULL;

-- Where the last complete scan got to: scanned_to is its clock (every limit crossed up to
-- then was reported), scanned_at the database time it started. The next scan looks only
-- at timers whose limit was crossed since scanned_to, plus issues changed and policies,
-- rules and desks created or enabled shortly before scanned_at, so its cost follows what
-- changed, not every running timer. NULL (no scan yet) makes the first scan look at
-- everything.
CREATE TABLE sla_scan_state (
    id         boolean PRIMARY KEY DEFAULT true CHECK (id),
    scanned_to timestamptz,
    scanned_at timestamptz
);
INSERT INTO sla_scan_state (id) VALUES (true);

CREATE TABLE incidents (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id          uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    issue_id            uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    severity            text NOT NULL CHECK (severity IN ('P1', 'P2', 'P3', 'P4')),
    on_call_assignee_id uuid REFERENCES users (id) ON DELETE SET NULL,
    postmortem_body     text,
    resolved_at         timestamptz,
    created_by          uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX incidents_project ON incidents (project_id, created_at DESC, id DESC);
CREATE INDEX incidents_issue ON incidents (issue_id);

-- Incoming e-mail already handled, by Message-ID (or a digest of the raw message when it
-- has none): a message polled again, or delivered twice, is recognized and skipped.
CREATE TABLE mail_messages (
    message_id  varchar(998) PRIMARY KEY,
    outcome     text NOT NULL CHECK (outcome IN ('TICKET', 'COMMENT', 'SKIPPED')),
    issue_id    uuid REFERENCES issues (id) ON DELETE SET NULL,
    received_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
