package api

// auditErrors maps the audit sentinels to docs/api-conventions.md#errors.
var auditErrors = []errorMapping{}
