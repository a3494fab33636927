package api

import "github.com/taskweave/taskweave/api/core"

// auditErrors maps the audit sentinels to docs/api-conventions.md#errors.
var auditErrors = []core.ErrorMapping{}
