package engine_test

import (
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/engine"
)

// TestShopTrade: a shop sells at its own price, buys back at its stated
// fraction of the price, only what it buys, and the engine checks the
// gold on both sides.
func TestShopTrade(t *testing.T) {
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get("brackwater")
	st := engine.NewState(engine.Config{}, adv, lib.Catalogue, 1)
	d := engine.NewDice(1)
	c, err := st.AddCharacter(d, "c1", "1", "p1", engine.NewCharacterSpec{Name: "Ann", Class: "rogue"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "market"); err != nil {
		t.Fatal(err)
	}
	var potion, bandage string
	for _, it := range st.Inventory(c.ID) {
		switch it.Template {
		case "healing-potion":
			potion = it.ID
		case "bandage":
			bandage = it.ID
		}
	}
	shops := st.ShopsHere()
	if len(shops) != 1 || shops[0].Keeper != "pell" || shops[0].BuysAt != 50 || len(shops[0].Stock) != 10 || len(shops[0].Offers) == 0 {
		t.Fatalf("shops at the market: %+v", shops)
	}
	for _, tc := range []struct {
		name, item, to string
		gold           int // the keeper's
		want           string
		price          int
	}{
		{"worth nothing at half price", bandage, "pell", 120, "will not pay anything", 0},
		{"the keeper cannot pay", potion, "pell", 5, "has only 5", 0},
		{"sold at half the price", potion, "pell", 120, "", 12},
		{"not at the market", potion, "nix", 60, "not here", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := st.Clone()
			st.World.NPCs[tc.to].Gold = tc.gold
			gold := st.Character(c.ID).Gold
			_, price, _, err := st.SellItem(c.ID, tc.item, tc.to)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("got %v, want an error saying %q", err, tc.want)
				}
				return
			}
			if err != nil || price != tc.price || st.Character(c.ID).Gold != gold+tc.price || st.World.NPCs[tc.to].Gold != tc.gold-tc.price {
				t.Errorf("sold for %d (%v); gold %d -> %d", price, err, gold, st.Character(c.ID).Gold)
			}
		})
	}
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "quay"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "dens"); err != nil {
		t.Fatal(err)
	}
	ledger := engine.StockID("nix", "salt-ledger", 1)
	c.Gold = 29
	if _, _, _, err := st.BuyItem(c.ID, ledger, "nix"); err == nil || !strings.Contains(err.Error(), "costs 30 gold") {
		t.Errorf("bought the ledger with 29 gold: %v", err)
	}
	c.Gold = 30
	if _, price, _, err := st.BuyItem(c.ID, ledger, "nix"); err != nil || price != 30 || c.Gold != 0 {
		t.Errorf("the ledger at the fence's price: %d, %v", price, err)
	}
	// The fence buys anything, at a third.
	if _, price, _, err := st.SellItem(c.ID, ledger, "nix"); err != nil || price != 3 {
		t.Errorf("the fence pays a third of the ledger's value: %d, %v", price, err)
	}
}
