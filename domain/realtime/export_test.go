package realtime

// ErrPayloadTooLarge lets the package's external tests see the internal error.
var ErrPayloadTooLarge = errPayloadTooLarge
