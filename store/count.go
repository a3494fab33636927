package store

// CountAhead is how far past a page's first row the admin jobs list counts its
// matches: counting every one of River's finished jobs cost more than the page itself
// and grew with the table. Up to offset + CountAhead rows the total is exact; beyond,
// it is reported as offset + CountAhead and marked inexact
// (docs/api-conventions.md#pages), which still tells a client that pages follow.
const CountAhead = 10_000

// CountLimit is the LIMIT of the counting subquery of a page starting at offset: a
// count that reaches it is not exact.
func CountLimit(offset int) int { return offset + CountAhead }

// PageCountAhead is the shorter bound of the lists whose matches grow with a project's
// history and that a person pages through: the audit lists and an issue list with
// filters. Their count reads the matches one by one, so the bound is its cost: at
// 10,000 a big project's audit page spent most of its time counting, reading ten
// thousand index entries the page never shows (docs/performance.md#the-scale-bench).
// 1,000 rows are twenty pages of 50 ahead.
const PageCountAhead = 1_000

// PageCountLimit is CountLimit for the lists bound by PageCountAhead.
func PageCountLimit(offset int) int { return offset + PageCountAhead }
