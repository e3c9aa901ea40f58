package isolated

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestReaperCounts(t *testing.T) {
	var r reaper
	assert.Zero(t, r.wait(0), "no child started")
	r.add()
	r.add()
	assert.Equal(t, 2, r.wait(0), "two children, neither reaped: the timeout ends the wait")
	r.done()
	assert.Equal(t, 1, r.wait(time.Millisecond))
	r.done()
	assert.Zero(t, r.wait(0))

	// A second round after the count went back to zero gets a fresh idle
	// channel (the first one is closed).
	r.add()
	assert.Equal(t, 1, r.wait(0))
	r.done()
	assert.Zero(t, r.wait(0))
}

func TestReaperWaitReturnsWhenTheLastChildIsReaped(t *testing.T) {
	var r reaper
	const n = 8
	for range n {
		r.add()
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-release
			r.done()
		})
	}
	left := make(chan int)
	go func() { left <- r.wait(time.Minute) }()
	close(release)
	// The wait ends on the last done, long before its minute: it returns 0.
	assert.Zero(t, <-left)
	wg.Wait()
}
