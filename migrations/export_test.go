package migrations

// ApplyUpTo exposes applyUpTo to the tests of package migrations_test.
var ApplyUpTo = applyUpTo
