package mlu

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// The exact tier's UUID comes from cnDeviceGetUuidStr, the string CNDev
// gives (cn_api.h), where the library has it; cnDeviceGetUuid's 16 bytes
// otherwise. Each case runs in a child (a loaded library stays loaded).
var uuidCases = map[string]struct {
	defines []string
	env     []string
	want    string
}{
	"uuid_str":       {want: "MLU-20212223-2425-2627-2829-2a2b2c2d2e2f"},
	"uuid_str_upper": {env: []string{"FAKE_CN_UUID_STR=ABCDEF01-2345-6789-ABCD-EF0123456789"}, want: "MLU-abcdef01-2345-6789-abcd-ef0123456789"},
	"uuid_str_bad":   {env: []string{"FAKE_CN_UUID_STR=not-a-uuid"}, want: ""},
	"uuid_bytes":     {defines: []string{"-DFAKE_NO_UUID_STR"}, want: "MLU-20212223-2425-2627-2829-2a2b2c2d2e2f"},
}

const uuidCaseEnv = "MLU_UUID_CASE"

func TestDeviceUUID(t *testing.T) {
	if dltest.IsChild(t) {
		c := uuidCases[os.Getenv(uuidCaseEnv)]
		p, err := New().Properties(1)
		require.NoError(t, err, "a string that is no UUID is no UUID, not an error")
		assert.Equal(t, c.want, p.UUID)
		return
	}
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake libcndrv")
	}
	suite.FakeSource = dltest.Abs(t, "testdata/fake_libcndrv.c")
	for name, c := range uuidCases {
		t.Run(name, func(t *testing.T) {
			p := suite.Build(t, c.defines...)
			dltest.MustChild(t, "TestDeviceUUID", append([]string{uuidCaseEnv + "=" + name, EnvVar + "=" + p}, c.env...)...)
		})
	}
}

func TestParseUUID(t *testing.T) {
	u, ok := parseUUID("00112233-4455-6677-8899-aAbBcCdDeEfF")
	require.True(t, ok)
	assert.Equal(t, [16]byte{0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}, u)
	for _, s := range []string{"", "00112233445566778899aabbccddeeff", "00112233-4455-6677-8899-aabbccddeef", "0011223g-4455-6677-8899-aabbccddeeff", "00112233-4455-6677-8899_aabbccddeeff"} {
		_, ok := parseUUID(s)
		assert.False(t, ok, s)
	}
}

// FuzzParseUUID: any string parses without panic, and what parses is 36
// characters of hex and dashes.
func FuzzParseUUID(f *testing.F) {
	f.Add("00112233-4455-6677-8899-aabbccddeeff")
	f.Add("----------------------------------- ")
	f.Fuzz(func(t *testing.T, s string) {
		if _, ok := parseUUID(s); ok && len(s) != 36 {
			t.Fatalf("%q parsed", s)
		}
	})
}
