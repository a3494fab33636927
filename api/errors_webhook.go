package api

// webhookErrors maps the webhook sentinels to CONTRACT §2.
var webhookErrors = []errorMapping{}
