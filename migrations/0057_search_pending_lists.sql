-- The search indexes' pending lists, bounded (docs/performance.md#search).
--
-- A GIN index with `fastupdate` (the default) puts a write's new entries in a pending
-- list, merged into the index proper when the list passes `gin_pending_list_limit`
-- (4 MB by default) or a vacuum runs. Every search reads the whole pending list of each
-- index it uses: at 4 MB, some 500 pages per index and query, most of a selective
-- query's time. A list of 1 MB costs a search at most 128 pages, and the write that
-- passes it merges a quarter of what it did. (256 kB was tried: searches gained little
-- more, and the merges, sixteen times as frequent, reached the writes' p99.) Setting a
-- storage parameter takes a brief SHARE UPDATE EXCLUSIVE lock; it rewrites nothing.
ALTER INDEX issue_search_doc_en SET (gin_pending_list_limit = 1024);
ALTER INDEX issue_search_doc_de SET (gin_pending_list_limit = 1024);
ALTER INDEX issue_search_head_en SET (gin_pending_list_limit = 1024);
ALTER INDEX issue_search_head_de SET (gin_pending_list_limit = 1024);
