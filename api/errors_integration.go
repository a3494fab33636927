package api

// integrationErrors maps the integration sentinels to CONTRACT §2.
var integrationErrors = []errorMapping{}
