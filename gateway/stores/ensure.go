package stores

import (
	"context"

	"github.com/ckgate/ckgate/gateway"
)

// MakeLocalRoot creates the directory of st, opened from raw, when raw
// names the local disk (a plain path or file://), so that a command that
// writes a new root (run, archive, restore, fresh-start) may be given a
// directory that does not exist yet. A cloud bucket or container is never
// created here, whatever st is: it must exist already (`ckgate store mb`
// makes one), and MakeLocalRoot returns nil for it. The error is
// gateway.MakeBucket's; the caller names the role raw plays.
func MakeLocalRoot(ctx context.Context, raw string, st gateway.Store) error {
	if u, err := gateway.ParseURL(raw); err != nil || u.Scheme != "file" {
		return nil
	}
	return gateway.MakeBucket(ctx, st)
}
