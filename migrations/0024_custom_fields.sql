-- Custom fields: per-project definitions (TEXT, NUMBER, DATE, DROPDOWN, CHECKBOX), the
-- options of DROPDOWN fields, and the values issues hold (docs/api-conventions.md#custom-fields).

-- Trigram indexes answer the TEXT filter (a case-insensitive substring). pg_trgm ships
-- with Postgres and is a trusted extension: the database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE custom_fields (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name       varchar(100) NOT NULL CHECK (btrim(name) <> ''),
    type       text NOT NULL CHECK (type IN ('TEXT', 'NUMBER', 'DATE', 'DROPDOWN', 'CHECKBOX')),
    required   boolean NOT NULL DEFAULT false,
    sort_order integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- Names are unique per project whatever their case: "Severity" and "severity" would be
-- two columns nobody can tell apart.
CREATE UNIQUE INDEX custom_fields_project_name_key ON custom_fields (project_id, lower(name));
CREATE INDEX custom_fields_project ON custom_fields (project_id, sort_order, created_at, id);

-- A field's type decides which value column its values use, so it never changes, whoever
-- writes the row.
CREATE FUNCTION custom_fields_type_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.type <> OLD.type THEN
        RAISE EXCEPTION 'the type of custom field % cannot change', OLD.id USING ERRCODE = 'check_violation',
            CONSTRAINT = 'custom_fields_type_fixed';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER custom_fields_type_fixed BEFORE UPDATE OF type ON custom_fields
    FOR EACH ROW EXECUTE FUNCTION custom_fields_type_fixed();

CREATE TABLE custom_field_options (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    field_id   uuid NOT NULL REFERENCES custom_fields (id) ON DELETE CASCADE,
    label      varchar(100) NOT NULL CHECK (btrim(label) <> ''),
    sort_order integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX custom_field_options_field_label_key ON custom_field_options (field_id, lower(label));
-- The target of the values' (field_id, option_id) key: a value names an option of its own
-- field.
ALTER TABLE custom_field_options ADD CONSTRAINT custom_field_options_field_id_key UNIQUE (field_id, id);

-- One row per set value: exactly one value column is filled, the one of the field's
-- type. An unset value has no row.
CREATE TABLE custom_field_values (
    issue_id     uuid NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    field_id     uuid NOT NULL REFERENCES custom_fields (id) ON DELETE CASCADE,
    text_value   text,
    number_value numeric,
    date_value   date,
    bool_value   boolean,
    option_id    uuid,
    PRIMARY KEY (issue_id, field_id),
    CONSTRAINT custom_field_values_option_fk FOREIGN KEY (field_id, option_id)
        REFERENCES custom_field_options (field_id, id) ON DELETE CASCADE,
    CONSTRAINT custom_field_values_one CHECK (num_nonnulls(text_value, number_value, date_value, bool_value, option_id) = 1)
);
-- The cf list filter reads these from the value side (which issues hold this value of
-- this field); (field_id, number_value) is whole, not partial, so deleting a field finds
-- its values through it.
CREATE INDEX custom_field_values_number ON custom_field_values (field_id, number_value);
CREATE INDEX custom_field_values_date ON custom_field_values (field_id, date_value) WHERE date_value IS NOT NULL;
CREATE INDEX custom_field_values_bool ON custom_field_values (field_id, bool_value) WHERE bool_value IS NOT NULL;
CREATE INDEX custom_field_values_option ON custom_field_values (option_id) WHERE option_id IS NOT NULL;
CREATE INDEX custom_field_values_text ON custom_field_values USING gin (text_value gin_trgm_ops) WHERE text_value IS NOT NULL;

-- A custom field change is an activity entry too (a Taskweave addition: the web client
-- shows unknown types as they are).
ALTER TABLE issue_activities DROP CONSTRAINT issue_activities_type_check;
ALTER TABLE issue_activities ADD CONSTRAINT issue_activities_type_check CHECK (type IN ('COMMENT', 'STATUS_CHANGED',
    'ASSIGNED', 'UNASSIGNED', 'PRIORITY_CHANGED', 'TITLE_CHANGED', 'DESCRIPTION_CHANGED', 'STORY_POINTS_CHANGED',
    'DUE_DATE_CHANGED', 'SPRINT_CHANGED', 'ATTACHMENT_ADDED', 'ATTACHMENT_REMOVED', 'CUSTOM_FIELD_CHANGED'));
