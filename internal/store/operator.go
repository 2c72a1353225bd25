package store

// Spend is what the models cost on one UTC day (2006-01-02) for one table
// ("" for calls of no table, such as the data agent's).
type Spend struct {
	Day     string  `json:"day"`
	TableID string  `json:"table_id"`
	Calls   int     `json:"calls"`
	USD     float64 `json:"usd"`
}

// TableBudget is a table's own daily model budget and who set it last.
type TableBudget struct {
	TableID   string  `json:"table_id"`
	USDPerDay float64 `json:"usd_per_day"`
	SetBy     string  `json:"set_by"`
}
