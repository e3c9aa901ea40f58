package isolated

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A child's stderr is copied into a tail by os/exec; a short write would
// stop the copy and leave the child writing into a closed pipe.
func TestTailTakesEveryWrite(t *testing.T) {
	var tl tail
	for _, n := range []int{100, 5000, 1} { // across the head's 4096 bytes
		got, err := tl.Write(bytes.Repeat([]byte("x"), n))
		require.NoError(t, err)
		assert.Equal(t, n, got, "a write of %d bytes", n)
	}

	var copied tail
	src := strings.Repeat("a", 4096) + strings.Repeat("b", 3000) + "the end"
	n, err := io.Copy(&copied, strings.NewReader(src))
	require.NoError(t, err)
	assert.Equal(t, int64(len(src)), n)
	s := copied.String()
	assert.True(t, strings.HasPrefix(s, strings.Repeat("a", 4096)), "the first 4096 bytes are kept")
	assert.True(t, strings.HasSuffix(s, "the end"), "and the last 1024")
	assert.Len(t, s, 4096+1024)
}
