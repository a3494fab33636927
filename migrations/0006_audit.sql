-- Audit API: 0001 already indexes the time order and the user, project and action
-- filters, each with "timestamp" DESC so a filtered page walks the index in order. The
-- level filter had none; without one a page of a rare level (ALL: views) would walk the
-- whole time index to find its rows.
CREATE INDEX audit_events_level_time ON audit_events (level, "timestamp" DESC, id DESC);
