package gateway

import (
	"context"
	"log/slog"
)

type loggerKey struct{}

// WithLogger returns ctx carrying l. A backend opened with it reports what
// its SDK would otherwise print by itself (the AWS SDK's warnings, say)
// to l, at l's level: nothing reaches stderr that the caller did not ask
// for.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// LoggerFrom is the logger WithLogger put in ctx, or one that discards.
func LoggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}
