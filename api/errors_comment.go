package api

// commentErrors maps the comment sentinels to CONTRACT §2.
var commentErrors = []errorMapping{}
