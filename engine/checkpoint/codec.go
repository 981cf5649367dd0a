package checkpoint

import (
	"fmt"
	"strings"
)

// ConfCompressionCodec is the offset-log conf that pins the state store
// codec; a missing key means lz4 (Spark < 3.1 was hard-wired to lz4).
const ConfCompressionCodec = "spark.sql.streaming.stateStore.compression.codec"

// NormalizeCodec returns the short name of a Spark compression codec conf
// value: "" → "lz4"; class names of Spark's codecs map to lz4, lzf,
// snappy, zstd; anything else is returned lower-cased.
func NormalizeCodec(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "":
		return "lz4"
	case "org.apache.spark.io.lz4compressioncodec":
		return "lz4"
	case "org.apache.spark.io.lzfcompressioncodec":
		return "lzf"
	case "org.apache.spark.io.snappycompressioncodec":
		return "snappy"
	case "org.apache.spark.io.zstdcompressioncodec":
		return "zstd"
	}
	return n
}

// decompressState undoes the state store codec. Only lz4 (lz4-java block
// streams) is decoded; a file that starts with the lz4 block magic is
// decoded whatever the conf says.
func decompressState(codec string, data []byte, limit int64) ([]byte, error) {
	if IsLZ4Block(data) || NormalizeCodec(codec) == "lz4" {
		return DecodeLZ4Block(data, limit)
	}
	return nil, fmt.Errorf("%w %q (only lz4 is decoded)", ErrUnsupportedCodec, NormalizeCodec(codec))
}
