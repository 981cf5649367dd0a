package checkpoint_test

import (
	"context"
	"fmt"

	"github.com/ckgate/ckgate/engine/checkpoint"
	"github.com/ckgate/ckgate/gateway"
	"github.com/ckgate/ckgate/gateway/memstore"
)

func ExampleInspect() {
	ctx := context.Background()
	st := memstore.New()
	write := func(key string, data []byte) { st.Put(ctx, key, data, gateway.IfAbsent()) }
	write(checkpoint.MetadataKey, checkpoint.StreamMetadata{ID: "9538ada3-a233-4697-8b02-cc66250189a3"}.Encode())
	for batch := int64(0); batch < 3; batch++ {
		seq := checkpoint.OffsetSeq{
			Metadata: &checkpoint.OffsetSeqMetadata{BatchWatermarkMs: batch * 1000, BatchTimestampMs: 1700000000000},
			Sources:  []checkpoint.OffsetEntry{{JSON: checkpoint.EncodeKafkaOffsets(map[string]map[int32]int64{"clicks": {0: batch * 10}}), Present: true}},
		}
		b, _ := seq.Encode()
		write(checkpoint.OffsetsKey(batch), b)
		if batch < 2 { // batch 2 has not committed
			c, _ := checkpoint.CommitMetadata{NextBatchWatermarkMs: batch * 1000}.Encode()
			write(checkpoint.CommitKey(batch), c)
		}
	}
	r, err := checkpoint.Inspect(ctx, st, checkpoint.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.QueryID, r.Status, *r.LatestOffsetsBatch, *r.LatestCommitBatch)
	fmt.Println("next batch", r.Resume.NextBatch, "re-run:", r.Resume.Rerun, "watermark", *r.WatermarkMs)
	fmt.Println("clicks/0 at", r.Sources[0].Offset.Kafka[0].Offset, "OK:", r.OK())
	// Output:
	// 9538ada3-a233-4697-8b02-cc66250189a3 in_flight 2 1
	// next batch 2 re-run: true watermark 2000
	// clicks/0 at 20 OK: true
}

func ExampleDecodeOffsetSeq() {
	seq, err := checkpoint.DecodeOffsetSeq([]byte("v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1489180209261}\n{\"logOffset\":2}\n-"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range seq.Sources {
		so := checkpoint.ParseSourceOffset(e)
		fmt.Println(e.ID, so.Kind)
	}
	_, err = checkpoint.DecodeOffsetSeq([]byte("v99\n{}"))
	fmt.Println(err)
	// Output:
	// 0 file
	// 1 none
	// offset log version v99 is not supported (highest understood: v2)
}
