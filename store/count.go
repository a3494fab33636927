package store

// CountAhead is how far past a page's first row the lists that may hold millions of
// rows (the audit logs, the admin jobs list) count their matches: counting every
// match of a big project's audit log or of River's finished jobs cost more than the
// page itself and grew with the table. Up to offset + CountAhead rows the total is
// exact; beyond, it is reported as offset + CountAhead and marked inexact
// (docs/api-conventions.md#pages), which still tells a client that pages follow.
const CountAhead = 10_000

// CountLimit is the LIMIT of the counting subquery of a page starting at offset: a
// count that reaches it is not exact.
func CountLimit(offset int) int { return offset + CountAhead }
