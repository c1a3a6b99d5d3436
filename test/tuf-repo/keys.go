package main

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/theupdateframework/go-tuf/v2/metadata"
)

// keyFile is one private key on disk. Test keys only: plain hex, no passphrase.
type keyFile struct {
	KeyType string `json:"keytype"`
	Scheme  string `json:"scheme"`
	KeyID   string `json:"keyid"`
	Public  string `json:"public"`
	// The 32-byte ed25519 seed, hex.
	Private string `json:"private"`
}

// newKey makes an ed25519 key for role and saves it as keys/<role>-<n>.json, n one more than
// the role's highest so far (a rotation adds keys; the old ones stay to sign the handover).
func (r *repo) newKey(role string) (*metadata.Key, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	key, err := metadata.KeyFromPublicKey(pub)
	if err != nil {
		return nil, err
	}
	id, err := key.ID()
	if err != nil {
		return nil, err
	}
	n, err := r.nextKeyNumber(role)
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(keyFile{
		KeyType: key.Type, Scheme: key.Scheme, KeyID: id,
		Public: key.Value.PublicKey, Private: hex.EncodeToString(priv.Seed()),
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	return key, writeAtomic(filepath.Join(r.keysDir(), fmt.Sprintf("%s-%d.json", role, n)), data)
}

func (r *repo) nextKeyNumber(role string) (int, error) {
	entries, err := os.ReadDir(r.keysDir())
	if err != nil && !os.IsNotExist(err) {
		return 0, err
	}
	own := regexp.MustCompile("^" + regexp.QuoteMeta(role) + `-(\d+)\.json$`)
	highest := 0
	for _, e := range entries {
		if m := own.FindStringSubmatch(e.Name()); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > highest {
				highest = n
			}
		}
	}
	return highest + 1, nil
}

// privateKeys reads every key file, by keyid.
func (r *repo) privateKeys() (map[string]ed25519.PrivateKey, error) {
	entries, err := os.ReadDir(r.keysDir())
	if err != nil {
		return nil, err
	}
	keys := map[string]ed25519.PrivateKey{}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(r.keysDir(), e.Name()))
		if err != nil {
			return nil, err
		}
		var k keyFile
		if err := json.Unmarshal(data, &k); err != nil {
			return nil, fmt.Errorf("key %s: %w", e.Name(), err)
		}
		seed, err := hex.DecodeString(k.Private)
		if err != nil || len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("key %s: private is not a hex ed25519 seed", e.Name())
		}
		keys[k.KeyID] = ed25519.NewKeyFromSeed(seed)
	}
	return keys, nil
}

// signers are the first k of keyids (all of them when k < 0 or k > len): "first" in the order
// the delegating metadata lists them, so --sign-with targets=1 always picks the same key.
func (r *repo) signers(keyids []string, k int) ([]signature.Signer, error) {
	if k < 0 || k > len(keyids) {
		k = len(keyids)
	}
	keys, err := r.privateKeys()
	if err != nil {
		return nil, err
	}
	var out []signature.Signer
	for _, id := range keyids[:k] {
		priv, ok := keys[id]
		if !ok {
			return nil, fmt.Errorf("no private key for keyid %s in %s", id, r.keysDir())
		}
		// ed25519 signs the message itself, so no hash function (crypto.Hash(0)).
		s, err := signature.LoadSigner(priv, crypto.Hash(0))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// signRole replaces role's signatures with those of the first k of its keys.
func signRole[T metadata.Roles](r *repo, m *metadata.Metadata[T], role string, k int) error {
	keyids, _, err := r.roleKeys(role)
	if err != nil {
		return err
	}
	signers, err := r.signers(keyids, k)
	if err != nil {
		return err
	}
	return signWith(m, signers)
}

func signWith[T metadata.Roles](m *metadata.Metadata[T], signers []signature.Signer) error {
	m.ClearSignatures()
	for _, s := range signers {
		if _, err := m.Sign(s); err != nil {
			return err
		}
	}
	return nil
}
