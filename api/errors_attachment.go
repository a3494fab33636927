package api

// attachmentErrors maps the attachment sentinels to CONTRACT §2.
var attachmentErrors = []errorMapping{}
