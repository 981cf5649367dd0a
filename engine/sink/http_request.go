package sink

import "encoding/json"

// HTTPRequest is the body of every request the http sink POSTs, as its
// receiver decodes it: the query id, the batch id and the chunk's records,
// each under its idempotency key <query id>/<batch id>/<record id>. The
// request's Idempotency-Key header is the first record's key.
type HTTPRequest struct {
	Query   string       `json:"query"`
	Batch   int64        `json:"batch"`
	Records []HTTPRecord `json:"records"`
}

// HTTPRecord is one record of an HTTPRequest: its idempotency key and the
// row as a JSON object.
type HTTPRecord struct {
	Key    string          `json:"key"`
	Record json.RawMessage `json:"record"`
}
