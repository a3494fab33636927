package api

// auditErrors maps the audit sentinels to CONTRACT §2.
var auditErrors = []errorMapping{}
