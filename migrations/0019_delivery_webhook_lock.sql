-- A delivery record's webhook was checked by a foreign key: one lookup and row lock of
-- the webhook per inserted record, each through the trigger machinery (a tenth of the
-- Postgres time of a transaction that emits issue events to a webhook). The statement
-- that saves the records (domain/webhook saveSQL) now takes that same key-share lock
-- itself, once per webhook and statement, and the cascade becomes a statement trigger:
--   * a webhook deleted while a transaction is saving records for it: its DELETE waits
--     for that transaction's lock, and the trigger's DELETE, a later statement, sees
--     the records it committed and removes them;
--   * a transaction saving records after the webhook's DELETE took its row lock waits
--     for it, then finds the webhook gone and saves nothing.
-- A project's deletion cascades to its webhooks, which fires the trigger too.
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_webhook_id_fkey;

CREATE FUNCTION delete_deliveries_of_deleted_webhooks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM webhook_deliveries AS d USING deleted_webhooks AS w WHERE d.webhook_id = w.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER webhooks_delete_deliveries AFTER DELETE ON webhooks
    REFERENCING OLD TABLE AS deleted_webhooks
    FOR EACH STATEMENT EXECUTE FUNCTION delete_deliveries_of_deleted_webhooks();
