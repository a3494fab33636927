package api

// reportErrors maps the report sentinels to CONTRACT §2.
var reportErrors = []errorMapping{}
