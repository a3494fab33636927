-- Business-hours calendars and pause statuses for SLA policies
-- (docs/api-conventions.md#service-desk, docs/operations.md#service-desk).

-- A desk's calendar: the working days (ISO weekday numbers, 1 = Monday) and hours
-- (minutes after local midnight, end exclusive) in an IANA time zone, the public
-- holidays of a country (rickar/cal, NULL for none) and the desk's own holidays.
CREATE TABLE sla_calendars (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    service_desk_id  uuid        NOT NULL REFERENCES service_desks (id) ON DELETE CASCADE,
    name             text        NOT NULL,
    timezone         text        NOT NULL,
    working_days     smallint[]  NOT NULL,
    work_start       smallint    NOT NULL CHECK (work_start >= 0 AND work_start < 1440),
    work_end         smallint    NOT NULL CHECK (work_end > work_start AND work_end <= 1440),
    holidays_country text,
    holidays         date[]      NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at       timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX sla_calendars_desk ON sla_calendars (service_desk_id, created_at);

-- A policy with a calendar counts business time only; while an issue is in one of
-- pause_status_ids its clocks stop. Deleting a calendar a policy uses is refused.
-- clocks_stale asks the next scan to recompute every clock of the policy (it is new, its
-- calendar or rules changed, its desk was enabled again).
ALTER TABLE sla_policies
    ADD COLUMN calendar_id uuid REFERENCES sla_calendars (id) ON DELETE RESTRICT,
    ADD COLUMN pause_status_ids uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN clocks_stale boolean NOT NULL DEFAULT true;
CREATE INDEX sla_policies_calendar ON sla_policies (calendar_id) WHERE calendar_id IS NOT NULL;

-- The running clocks of policies with a calendar or pause statuses: when each limit
-- (RESOLUTION, RESPONSE, each escalation rule) falls due in wall-clock time, computed
-- by the scan from the calendar and the issue's pauses whenever the issue, its policy
-- or the calendar changed. due_at is NULL while the clock is paused; done once the scan
-- judged it (reported, or a response answered in time). issue_updated_at is the issue's
-- updated_at the clock was computed from: a recent change already computed is not
-- computed again. The scan reads the partial index only: due clocks not yet judged.
CREATE TABLE sla_clocks (
    issue_id           uuid        NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    sla_policy_id      uuid        NOT NULL REFERENCES sla_policies (id) ON DELETE CASCADE,
    kind               text        NOT NULL CHECK (kind IN ('RESOLUTION', 'RESPONSE', 'ESCALATION')),
    escalation_rule_id uuid        REFERENCES escalation_rules (id) ON DELETE CASCADE,
    due_at             timestamptz,
    done               boolean     NOT NULL DEFAULT false,
    issue_updated_at   timestamptz NOT NULL,
    CONSTRAINT sla_clocks_once UNIQUE NULLS NOT DISTINCT (issue_id, sla_policy_id, kind, escalation_rule_id)
);
CREATE INDEX sla_clocks_due ON sla_clocks (due_at) WHERE NOT done AND due_at IS NOT NULL;
CREATE INDEX sla_clocks_policy ON sla_clocks (sla_policy_id);
CREATE INDEX sla_clocks_rule ON sla_clocks (escalation_rule_id) WHERE escalation_rule_id IS NOT NULL;
