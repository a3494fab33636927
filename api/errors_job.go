package api

// jobErrors maps the job sentinels to CONTRACT §2.
var jobErrors = []errorMapping{}
