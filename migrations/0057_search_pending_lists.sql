-- The search indexes' pending lists, bounded (docs/performance.md#search).
--
-- A GIN index with `fastupdate` (the default) puts a write's new entries in a pending
-- list, merged into the index proper when the list passes `gin_pending_list_limit`
-- (4 MB by default) or a vacuum runs. Every search reads the whole pending list of each
-- index it uses: at 4 MB, some 500 pages per index and query, which was most of a
-- selective query's time. A list of 256 kB costs a search at most 32 pages, and the
-- write that passes it merges 256 kB instead of 4 MB (tens of milliseconds, not a
-- second). Setting a storage parameter takes a brief SHARE UPDATE EXCLUSIVE lock; it
-- rewrites nothing.
ALTER INDEX issue_search_doc_en SET (gin_pending_list_limit = 256);
ALTER INDEX issue_search_doc_de SET (gin_pending_list_limit = 256);
ALTER INDEX issue_search_head_en SET (gin_pending_list_limit = 256);
ALTER INDEX issue_search_head_de SET (gin_pending_list_limit = 256);
