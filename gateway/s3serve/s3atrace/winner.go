package s3atrace

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/smithy-go"
)

// Winner checks the outcome of racing commits of one log entry, errs[i]
// being driver i's: exactly one succeeded, and every other failed the way
// Spark reports a lost race through S3A (412 PreconditionFailed, never a
// 409 S3 clients would retry, nor any other error). It returns the
// winner's index.
func Winner(errs []error) (int, error) {
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			return -1, fmt.Errorf("drivers %d and %d both committed", won, i)
		case err == nil:
			won = i
		case StatusCode(err) != http.StatusPreconditionFailed || Code(err) != "PreconditionFailed":
			return -1, fmt.Errorf("driver %d: %v (HTTP %d), want 412 PreconditionFailed", i, err, StatusCode(err))
		}
	}
	if won < 0 {
		return -1, errors.New("no driver committed")
	}
	return won, nil
}

// Code is the S3 error code of err: "" for nil, and "other: " and the
// error's text for an error that carries no S3 code (a cut connection).
func Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}
