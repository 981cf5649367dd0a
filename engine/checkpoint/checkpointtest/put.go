package checkpointtest

import (
	"context"
	"fmt"

	"github.com/ckgate/ckgate/gateway"
	"golang.org/x/sync/errgroup"
)

// PutAll stores in st every file write passes to its put, with at most
// writers uploads at a time (a benchmark's checkpoint on an emulator), and
// returns the number of files write returns. The first failed put cancels
// the uploads not yet started and its error is returned.
func PutAll(ctx context.Context, st gateway.Store, writers int, write func(put func(key string, data []byte)) int) (int, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writers)
	files := write(func(key string, data []byte) {
		if gctx.Err() != nil {
			return
		}
		g.Go(func() error {
			if _, err := st.Put(gctx, key, data, gateway.None()); err != nil {
				return fmt.Errorf("put %s: %w", key, err)
			}
			return nil
		})
	})
	if err := g.Wait(); err != nil {
		return files, err
	}
	return files, ctx.Err()
}
