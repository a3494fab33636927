package api

// sprintErrors maps the sprint sentinels to CONTRACT §2.
var sprintErrors = []errorMapping{}
