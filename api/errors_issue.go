package api

// issueErrors maps issues, versions and activity.
var issueErrors = []errorMapping{}
