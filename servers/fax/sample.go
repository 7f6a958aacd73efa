package fax

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/api"
)

// SamplePDF renders a US Letter PDF of pages pages (1 to MaxPages), each
// titled "apistack sample fax" and numbered, so `apistack serve` can offer a
// document to send without reaching the internet.
func SamplePDF(pages int) ([]byte, error) {
	if pages < 1 || pages > MaxPages {
		return nil, fmt.Errorf("fax: sample PDF: %d pages is not between 1 and %d", pages, MaxPages)
	}
	type font struct {
		Name string `json:"name"`
		Size int    `json:"size"`
	}
	type text struct {
		Value string `json:"value"`
		Pos   [2]int `json:"pos"`
		Font  font   `json:"font"`
	}
	type content struct {
		Text []text `json:"text"`
	}
	type page struct {
		Content content `json:"content"`
	}
	doc := struct {
		Paper  string          `json:"paper"`
		Origin string          `json:"origin"`
		Pages  map[string]page `json:"pages"`
	}{Paper: "LetterP", Origin: "UpperLeft", Pages: map[string]page{}}
	for i := 1; i <= pages; i++ {
		doc.Pages[strconv.Itoa(i)] = page{Content: content{Text: []text{
			{Value: "apistack sample fax", Pos: [2]int{72, 72}, Font: font{"Helvetica-Bold", 28}},
			{Value: fmt.Sprintf("page %d of %d", i, pages), Pos: [2]int{72, 120}, Font: font{"Helvetica", 14}},
		}}}
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("fax: sample PDF: %w", err)
	}
	var out bytes.Buffer
	if err := api.Create(nil, bytes.NewReader(js), &out, nil); err != nil {
		return nil, fmt.Errorf("fax: sample PDF: %w", err)
	}
	return out.Bytes(), nil
}
