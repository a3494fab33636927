package locale

var en = map[string]string{
	// Generic error codes.
	"error.BAD_REQUEST":        "The request is invalid.",
	"error.VALIDATION_ERROR":   "Some fields are invalid.",
	"error.UNAUTHORIZED":       "Authentication is required.",
	"error.FORBIDDEN":          "You are not allowed to do this.",
	"error.NOT_FOUND":          "The resource was not found.",
	"error.CONFLICT":           "The request conflicts with the current state.",
	"error.PAYLOAD_TOO_LARGE":  "The request body is too large.",
	"error.RATE_LIMITED":       "Too many requests. Try again in {seconds} seconds.",
	"error.INTERNAL_ERROR":     "Something went wrong on our side.",
	"error.UNAVAILABLE":        "The service is temporarily unavailable.",
	"error.METHOD_NOT_ALLOWED": "This method is not allowed here.",

	// Reasons.
	"reason.MALFORMED_JSON":            "The request body is not valid JSON.",
	"reason.MISSING_FIELD":             "The field {field} is required.",
	"reason.WRONG_TYPE":                "The field {field} has the wrong type.",
	"reason.INVALID_UUID":              "{field} is not a valid id.",
	"reason.INVALID_PAGE":              "page must be 0 or more and size 1 or more.",
	"reason.INVALID_CURSOR":            "The cursor is not one this list handed out.",
	"reason.UNKNOWN_MEMBER":            "The member {field} is not part of this request (Prefer: handling=strict).",
	"reason.READ_ONLY_MEMBER":          "The member {field} is read-only: the server sets it (Prefer: handling=strict).",
	"reason.INVALID_CREDENTIALS":       "Invalid email or password.",
	"reason.INVALID_REFRESH_TOKEN":     "The refresh token is invalid or expired.",
	"reason.REGISTRATION_DISABLED":     "Registration is disabled.",
	"reason.INVALID_CURRENT_PASSWORD":  "The current password is wrong.",
	"reason.NO_PASSWORD":               "This account has no password; it signs in through an external provider.",
	"reason.DUPLICATE_EMAIL":           "An account with this email already exists.",
	"reason.LAST_ADMIN":                "The last active administrator cannot be deactivated or deleted.",
	"reason.USER_DELETED":              "A deleted user cannot be activated.",
	"reason.READ_ONLY_TOKEN":           "This token is read-only.",
	"reason.API_KEY_SCOPE":             "This API key only works inside its own project.",
	"reason.ADMIN_ONLY":                "Only administrators may do this.",
	"reason.UNSUPPORTED_LANGUAGE":      "Supported languages are en and de.",
	"reason.UNKNOWN_NOTIFICATION_TYPE": "Unknown notification type {type}.",
	"reason.UNKNOWN_AUDIT_LEVEL":       "Unknown audit level {level}.",
	"reason.TOKEN_NOT_FOUND":           "The token was not found.",
	"reason.USER_NOT_FOUND":            "The user was not found.",
	"reason.ROUTE_NOT_FOUND":           "There is no such endpoint.",

	// Field constraint messages.
	"field.BLANK":      "must not be blank",
	"field.TOO_LONG":   "must be at most {max} characters",
	"field.TOO_SHORT":  "must be at least {min} characters",
	"field.EMAIL":      "must be a valid email address",
	"field.WHITESPACE": "must not consist of whitespace only",
	"field.PAST":       "must be in the future",
	"field.ENUM":       "must be one of {values}",
}

func init() {
	for k, v := range map[string]string{
		"reason.NUL_CHARACTER":          "Text must not contain NUL characters.",
		"reason.NOT_A_MEMBER":           "You are not a member of this project.",
		"reason.TRANSITION_NOT_ALLOWED": "The workflow does not allow this status change.",
		"reason.STATUS_NOT_IN_WORKFLOW": "The status does not belong to this project's workflow.",
		"reason.NO_DEFAULT_STATUS":      "The workflow has no status of category TODO for new issues.",
		"reason.GUARD_FIELD":            "The transition requires the field {field}.",
		"reason.GUARD_ROLE":             "The role {role} may not make this transition.",
	} {
		en[k] = v
	}
}
