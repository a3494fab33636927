-- The execution log of a rule filtered by issue or by status (docs/automation.md#execution-log),
-- newest first, as automation_executions_rule serves it unfiltered.
CREATE INDEX automation_executions_rule_issue ON automation_executions (rule_id, issue_id, created_at DESC, id DESC);
CREATE INDEX automation_executions_rule_status ON automation_executions (rule_id, status, created_at DESC, id DESC);
