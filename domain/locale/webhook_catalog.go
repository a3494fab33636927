package locale

// Messages of outgoing webhooks and their deliveries.
func init() {
	for k, v := range map[string]string{
		"reason.WEBHOOK_URL_REJECTED": "The webhook URL must be http or https with a host, and must not point to a loopback, private, link-local or multicast address.",
		"reason.WEBHOOK_NOT_FOUND":    "The webhook was not found.",
		"reason.DELIVERY_NOT_FOUND":   "The delivery was not found.",
		"reason.WEBHOOK_DISABLED":     "The webhook is disabled; enable it before sending to it.",
		"reason.UNKNOWN_EVENT":        "Unknown webhook event {event}; known events are {values}.",
		"field.WEBHOOK_EVENTS":        "must name at least one event",
	} {
		en[k] = v
	}
	for k, v := range map[string]string{
		"reason.WEBHOOK_URL_REJECTED": "Die Webhook-URL muss http oder https mit einem Host sein und darf nicht auf eine Loopback-, private, Link-Local- oder Multicast-Adresse zeigen.",
		"reason.WEBHOOK_NOT_FOUND":    "Der Webhook wurde nicht gefunden.",
		"reason.DELIVERY_NOT_FOUND":   "Die Zustellung wurde nicht gefunden.",
		"reason.WEBHOOK_DISABLED":     "Der Webhook ist deaktiviert; aktivieren Sie ihn, bevor Sie an ihn senden.",
		"reason.UNKNOWN_EVENT":        "Unbekanntes Webhook-Ereignis {event}; bekannte Ereignisse sind {values}.",
		"field.WEBHOOK_EVENTS":        "muss mindestens ein Ereignis nennen",
	} {
		de[k] = v
	}
}
