package isolated

import (
	"bufio"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A reader that has taken the child's bytes out of the pipe but not yet
// handled them (the window no drain tick can see) still hands them all on
// after finish: only its next read fails.
func TestFinishKeepsWhatTheReaderHolds(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	_, err = w.WriteString("step cuInit\nfacts {}\n")
	require.NoError(t, err)

	wr := &watched{f: r}
	br := bufio.NewReader(wr)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "step cuInit\n", line)
	assert.True(t, wr.empty(), "both lines are in the reader's hands, none in the pipe")

	require.True(t, wr.finish(), "a pipe takes a read deadline")
	line, err = br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "facts {}\n", line, "what the reader held is not lost")
	_, err = br.ReadString('\n')
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "then its reading ends")
}

// A reader waiting on an empty pipe returns at once on finish, although
// the pipe's write end is still open (something the child left behind).
func TestFinishEndsAWaitingReader(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	wr := &watched{f: r}
	done := make(chan error, 1)
	go func() {
		_, err := wr.Read(make([]byte, 16))
		done <- err
	}()
	for !wr.reading.Load() {
		time.Sleep(time.Millisecond)
	}
	require.True(t, wr.finish())
	assert.ErrorIs(t, <-done, os.ErrDeadlineExceeded)
}

// waitDrained returns once the reader has ended after finish, before its
// bound, with every byte read.
func TestWaitDrainedFinishes(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close() // held open: the pipe never ends by itself
	_, err = w.WriteString("it printed this before it exited\n")
	require.NoError(t, err)
	var got tail
	wr := &watched{f: r, stall: 3 * drainTick} // a late reader
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 8)
		for {
			n, err := wr.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				close(done)
				return
			}
		}
	}()
	waitDrained(done, wr, time.Now().Add(time.Hour))
	select {
	case <-done:
	default:
		t.Fatal("waitDrained returned before the reader ended")
	}
	assert.Equal(t, "it printed this before it exited\n", got.String())
}
