package s3store

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/smithy-go/logging"
)

// sdkLogger hands the AWS SDK's log lines (such as "falling back to
// IMDSv1" when no credentials are configured) to the caller's logger
// (gateway.LoggerFrom) instead of the SDK's default, which writes to
// stderr whatever the caller's log level.
type sdkLogger struct{ l *slog.Logger }

func (s sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	level := slog.LevelDebug
	if c == logging.Warn {
		level = slog.LevelWarn
	}
	s.l.Log(context.Background(), level, fmt.Sprintf(format, v...), "source", "aws-sdk")
}
