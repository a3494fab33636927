package api

// notificationErrors maps the notification sentinels to CONTRACT §2.
var notificationErrors = []errorMapping{}
