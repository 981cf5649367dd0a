package validate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ckgate/ckgate/validate"
)

// Probing a checkpoint directory on the local disk: every layer that
// applies to a local disk, then the cleanup.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "ckgate-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "checkpoint")
	if err := os.Mkdir(root, 0o755); err != nil {
		fmt.Println(err)
		return
	}
	rep, err := validate.Run(context.Background(), root, validate.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, res := range rep.Results {
		fmt.Printf("%s/%s: %s\n", res.Layer, res.Operation, res.Result)
	}
	fmt.Println("ok:", rep.OK)
	// Output:
	// credentials/resolve: pass
	// identity/whoami: pass
	// container/exists: pass
	// authorization/list: pass
	// authorization/get metadata: pass
	// authorization/put: pass
	// authorization/put if-absent: pass
	// authorization/put if-match: pass
	// authorization/get: pass
	// authorization/delete: pass
	// cleanup/remove probe keys: pass
	// ok: true
}
