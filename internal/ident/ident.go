// Package ident makes the unguessable values Tavern hands out: ids for
// players, tables, characters and actions, players' secret tokens, and the
// dice seeds of new tables. Every one comes from crypto/rand, so an id seen
// by one player tells nothing about the next one.
//
// Its functions are safe for concurrent use.
package ident

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
)

// New returns prefix followed by 16 random hex digits (64 bits), as in
// "t-9f86d081884c7d65". The prefix carries its own separator ("t-", "p_"):
// the formats are part of PROTOCOL.md and differ between kinds of ids.
func New(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return prefix + hex.EncodeToString(b[:])
}

// Token returns a secret of 256 random bits, URL-safe base64 without
// padding (43 characters): a player's token.
func Token() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Seed returns a random 64-bit seed for a table's dice.
func Seed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}
