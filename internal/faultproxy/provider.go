package faultproxy

import (
	"net/http"
	"strconv"
)

// Provider names whose error bodies the proxy sends.
type Provider string

const (
	S3    Provider = "s3"
	GCS   Provider = "gcs"
	Azure Provider = "azure"
)

// writeStatus answers status (500 or 503) the way provider does.
func writeStatus(w http.ResponseWriter, p Provider, status int) {
	h := w.Header()
	var body string
	switch p {
	case GCS:
		reason, msg := "backendError", "Backend Error"
		if status == http.StatusServiceUnavailable {
			reason, msg = "backendError", "We encountered an internal error. Please try again."
		}
		h.Set("Content-Type", "application/json; charset=UTF-8")
		body = `{"error":{"code":` + strconv.Itoa(status) + `,"message":"` + msg + `","errors":[{"message":"` + msg + `","domain":"global","reason":"` + reason + `"}]}}`
	case Azure:
		code, msg := "InternalError", "The server encountered an internal error. Please retry the request."
		if status == http.StatusServiceUnavailable {
			code, msg = "ServerBusy", "The server is currently unable to receive requests. Please retry your request."
		}
		h.Set("Content-Type", "application/xml")
		h.Set("x-ms-error-code", code)
		body = `<?xml version="1.0" encoding="utf-8"?><Error><Code>` + code + `</Code><Message>` + msg + `</Message></Error>`
	default:
		code, msg := "InternalError", "We encountered an internal error. Please try again."
		if status == http.StatusServiceUnavailable {
			code, msg = "SlowDown", "Please reduce your request rate."
		}
		h.Set("Content-Type", "application/xml")
		body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + code + `</Code><Message>` + msg + `</Message><RequestId>faultproxy</RequestId></Error>`
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write([]byte(body))
}
