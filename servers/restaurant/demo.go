package restaurant

import (
	"fmt"
	"math/rand/v2"

	"github.com/google/uuid"

	"github.com/apistack/apistack/gen/restaurantapi"
)

// Document is a restaurant configuration document as Import takes it: one
// array per resource (one object for tip withholding), each entity shaped as
// the restaurant API returns it.
type Document struct {
	AlternatePaymentTypes []restaurantapi.AlternatePaymentType `json:"alternatePaymentTypes,omitempty"`
	BreakTypes            []restaurantapi.BreakType            `json:"breakTypes,omitempty"`
	CashDrawers           []restaurantapi.CashDrawer           `json:"cashDrawers,omitempty"`
	DiningOptions         []restaurantapi.DiningOption         `json:"diningOptions,omitempty"`
	Discounts             []restaurantapi.Discount             `json:"discounts,omitempty"`
	MenuGroups            []restaurantapi.MenuGroup            `json:"menuGroups,omitempty"`
	MenuItems             []restaurantapi.MenuItem             `json:"menuItems,omitempty"`
	MenuOptionGroups      []restaurantapi.MenuOptionGroup      `json:"menuOptionGroups,omitempty"`
	Menus                 []restaurantapi.Menu                 `json:"menus,omitempty"`
	NoSaleReasons         []restaurantapi.NoSaleReason         `json:"noSaleReasons,omitempty"`
	PayoutReasons         []restaurantapi.PayoutReason         `json:"payoutReasons,omitempty"`
	PreModifiers          []restaurantapi.PreModifier          `json:"preModifiers,omitempty"`
	PreModifierGroups     []restaurantapi.PreModifierGroup     `json:"preModifierGroups,omitempty"`
	PriceGroups           []restaurantapi.PriceGroup           `json:"priceGroups,omitempty"`
	Printers              []restaurantapi.Printer              `json:"printers,omitempty"`
	RestaurantServices    []restaurantapi.RestaurantService    `json:"restaurantServices,omitempty"`
	RevenueCenters        []restaurantapi.RevenueCenter        `json:"revenueCenters,omitempty"`
	SalesCategories       []restaurantapi.SalesCategory        `json:"salesCategories,omitempty"`
	ServiceAreas          []restaurantapi.ServiceArea          `json:"serviceAreas,omitempty"`
	ServiceCharges        []restaurantapi.ServiceCharge        `json:"serviceCharges,omitempty"`
	Tables                []restaurantapi.Table                `json:"tables,omitempty"`
	TaxRates              []restaurantapi.TaxRate              `json:"taxRates,omitempty"`
	VoidReasons           []restaurantapi.VoidReason           `json:"voidReasons,omitempty"`
	TipWithholding        *restaurantapi.TipWithholding        `json:"tipWithholding,omitempty"`
}

// DemoOptions configures Demo.
type DemoOptions struct {
	// MenuItems is the number of menu items to generate, modifiers included.
	MenuItems int
	// Seed makes the configuration reproducible: the same seed and size give
	// the same GUIDs, names and numbers.
	Seed uint64
}

// Demo builds a realistic, internally consistent restaurant configuration:
// printers and cash drawers, revenue centers, service areas and their tables,
// dining options, payment types and reasons, discounts, taxes and service
// charges, pre-modifiers, and menus whose groups (some nested) hold
// opts.MenuItems menu items, modifiers included, with modifier groups whose
// options are menu items. Every reference names an entity of the document.
func Demo(opts DemoOptions) *Document {
	g := &demoGen{rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))}
	d := &Document{}
	g.setup(d)
	g.pricing(d)
	g.menus(d, max(opts.MenuItems, 0))
	return d
}

type demoGen struct {
	rng *rand.Rand
	n   int
}

func (g *demoGen) guid() string {
	var b [16]byte
	for i := range b {
		b[i] = byte(g.rng.UintN(256))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return uuid.UUID(b).String()
}

func (g *demoGen) externalID() *string {
	g.n++
	id := fmt.Sprintf("pos:%d", 100000+g.n)
	return &id
}

func ref(guid, entityType string) restaurantapi.Reference {
	return restaurantapi.Reference{Guid: guid, EntityType: entityType}
}

func extRef(guid, entityType string, externalID *string) restaurantapi.ExternalReference {
	return restaurantapi.ExternalReference{Guid: guid, EntityType: entityType, ExternalId: externalID}
}

func ptr[T any](v T) *T { return &v }

// setup fills the physical setup, the dining options and the reasons.
func (g *demoGen) setup(d *Document) {
	for _, name := range []string{"Kitchen Printer", "Bar Printer", "Expo Printer", "Receipt Printer"} {
		d.Printers = append(d.Printers, restaurantapi.Printer{Guid: g.guid(), EntityType: "Printer", Name: name})
	}
	for _, p := range []int{3, 1} {
		d.CashDrawers = append(d.CashDrawers, restaurantapi.CashDrawer{Guid: g.guid(), EntityType: "CashDrawer",
			Printer: ref(d.Printers[p].Guid, "Printer")})
	}
	for _, rc := range [][2]string{
		{"Dining Room", "Table service in the main room"},
		{"Bar", "Bar seating and bar tabs"},
		{"Patio", "Outdoor seating, open in season"},
	} {
		d.RevenueCenters = append(d.RevenueCenters, restaurantapi.RevenueCenter{Guid: g.guid(), EntityType: "RevenueCenter", Name: rc[0], Description: rc[1]})
	}
	areas := []struct {
		name, prefix string
		rc, tables   int
	}{{"Main Dining", "T", 0, 12}, {"Bar Seating", "B", 1, 8}, {"Patio", "P", 2, 10}, {"Private Room", "PR", 0, 4}}
	for _, a := range areas {
		rc := d.RevenueCenters[a.rc]
		area := restaurantapi.ServiceArea{Guid: g.guid(), EntityType: "ServiceArea", Name: a.name,
			RevenueCenter: extRef(rc.Guid, "RevenueCenter", nil)}
		d.ServiceAreas = append(d.ServiceAreas, area)
		for i := 1; i <= a.tables; i++ {
			d.Tables = append(d.Tables, restaurantapi.Table{Guid: g.guid(), EntityType: "Table",
				Name: fmt.Sprintf("%s%d", a.prefix, i), ServiceArea: ref(area.Guid, "ServiceArea"),
				RevenueCenter: extRef(rc.Guid, "RevenueCenter", nil)})
		}
	}
	for _, o := range []struct {
		name     string
		behavior restaurantapi.DiningOptionBehavior
		curbside bool
	}{
		{"Dine In", restaurantapi.DiningOptionBehaviorDINEIN, false},
		{"Take Out", restaurantapi.DiningOptionBehaviorTAKEOUT, false},
		{"Curbside", restaurantapi.DiningOptionBehaviorTAKEOUT, true},
		{"Delivery", restaurantapi.DiningOptionBehaviorDELIVERY, false},
	} {
		d.DiningOptions = append(d.DiningOptions, restaurantapi.DiningOption{Guid: g.guid(), EntityType: "DiningOption",
			ExternalId: g.externalID(), Name: o.name, Behavior: o.behavior, Curbside: o.curbside})
	}
	for _, name := range []string{"Gift Certificate", "House Account", "Check", "Third-Party Delivery"} {
		d.AlternatePaymentTypes = append(d.AlternatePaymentTypes, restaurantapi.AlternatePaymentType{Guid: g.guid(),
			EntityType: "AlternatePaymentType", ExternalId: g.externalID(), Name: name})
	}
	d.BreakTypes = []restaurantapi.BreakType{
		{Guid: g.guid(), EntityType: "BreakType", Name: "Meal Break", Active: true, Paid: false, Duration: 30,
			EnforceMinimumTime: true, TrackMissedBreaks: true, BreakIntervalHrs: ptr(5), BreakIntervalMins: ptr(0),
			TrackBreakAcknowledgement: true},
		{Guid: g.guid(), EntityType: "BreakType", Name: "Rest Break", Active: true, Paid: true, Duration: 10},
	}
	for _, name := range []string{"Make Change", "Count Drawer", "Manager Override"} {
		d.NoSaleReasons = append(d.NoSaleReasons, restaurantapi.NoSaleReason{Guid: g.guid(), EntityType: "NoSaleReason", Name: name})
	}
	for _, name := range []string{"Supplies", "Tip Out", "Delivery Driver"} {
		d.PayoutReasons = append(d.PayoutReasons, restaurantapi.PayoutReason{Guid: g.guid(), EntityType: "PayoutReason", Name: name})
	}
	for _, name := range []string{"Customer Changed Mind", "Kitchen Error", "Wrong Item Rung", "Duplicate Entry"} {
		d.VoidReasons = append(d.VoidReasons, restaurantapi.VoidReason{Guid: g.guid(), EntityType: "VoidReason", Name: name})
	}
	for _, name := range []string{"Breakfast", "Lunch", "Dinner", "Late Night"} {
		d.RestaurantServices = append(d.RestaurantServices, restaurantapi.RestaurantService{Guid: g.guid(), EntityType: "RestaurantService", Name: name})
	}
	for _, name := range []string{"Food", "Non-Alcoholic Beverage", "Beer", "Wine", "Liquor", "Retail"} {
		d.SalesCategories = append(d.SalesCategories, restaurantapi.SalesCategory{Guid: g.guid(), EntityType: "SalesCategory", Name: name})
	}
	d.TipWithholding = &restaurantapi.TipWithholding{Guid: g.guid(), EntityType: "TipWithholding", Enabled: true, Percentage: 3}
}

// pricing fills discounts, price groups, taxes, service charges and
// pre-modifiers.
func (g *demoGen) pricing(d *Document) {
	for _, name := range []string{"Happy Hour", "Lunch Pricing", "Dinner Pricing"} {
		d.PriceGroups = append(d.PriceGroups, restaurantapi.PriceGroup{Guid: g.guid(), EntityType: "PriceGroup", Name: name})
	}
	disc := func(name string, t restaurantapi.DiscountType, sel string) restaurantapi.Discount {
		return restaurantapi.Discount{Guid: g.guid(), EntityType: "Discount", Name: name, Active: true, Type: t, SelectionType: sel}
	}
	pct, fixed, bogo, combo := disc("10% Off Check", restaurantapi.DiscountTypePERCENT, "CHECK"),
		disc("$5 Off", restaurantapi.DiscountTypeFIXED, "CHECK"),
		disc("Buy One Get One", restaurantapi.DiscountTypeBOGO, "BOGO"),
		disc("Lunch Combo $12", restaurantapi.DiscountTypeFIXEDTOTAL, "ITEM")
	pct.Percentage = ptr(10.0)
	fixed.Amount = ptr(5.0)
	bogo.ItemPickingPriority = ptr(restaurantapi.DiscountItemPickingPriorityLEASTEXPENSIVE)
	combo.FixedTotal = ptr(12.0)
	combo.ItemPickingPriority = ptr(restaurantapi.DiscountItemPickingPriorityMOSTEXPENSIVE)
	comp := disc("Manager Comp", restaurantapi.DiscountTypeOPENPERCENT, "CHECK")
	comp.NonExclusive = true
	staff := disc("Employee Meal", restaurantapi.DiscountTypeOPENFIXED, "ITEM")
	staff.Active = false
	d.Discounts = []restaurantapi.Discount{pct, fixed, bogo, combo, comp, staff}

	halfUp, halfEven := restaurantapi.TaxRateRoundingTypeHALFUP, restaurantapi.TaxRateRoundingTypeHALFEVEN
	state := restaurantapi.TaxRate{Guid: g.guid(), EntityType: "TaxRate", Name: "State Sales Tax", IsDefault: true,
		Rate: ptr(6.25), Type: restaurantapi.TaxRateTypePERCENT, RoundingType: &halfUp, TaxTable: []restaurantapi.TaxTableRow{},
		ConditionalTaxRates: []restaurantapi.ConditionalTaxRate{{Condition: "DINING_OPTION:TAKE_OUT", Rate: 6.0}}}
	city := restaurantapi.TaxRate{Guid: g.guid(), EntityType: "TaxRate", Name: "City Tax", Rate: ptr(1.5),
		Type: restaurantapi.TaxRateTypePERCENT, RoundingType: &halfEven, TaxTable: []restaurantapi.TaxTableRow{},
		ConditionalTaxRates: []restaurantapi.ConditionalTaxRate{}}
	bev := restaurantapi.TaxRate{Guid: g.guid(), EntityType: "TaxRate", Name: "Beverage Tax Table", Rate: ptr(0.0),
		Type: restaurantapi.TaxRateTypeTABLE, ConditionalTaxRates: []restaurantapi.ConditionalTaxRate{}}
	for i := range 5 {
		bev.TaxTable = append(bev.TaxTable, restaurantapi.TaxTableRow{Start: float64(i), End: float64(i) + 0.99, Tax: 0.08 * float64(i)})
	}
	exempt := restaurantapi.TaxRate{Guid: g.guid(), EntityType: "TaxRate", Name: "Tax Exempt", Type: restaurantapi.TaxRateTypeNONE,
		TaxTable: []restaurantapi.TaxTableRow{}, ConditionalTaxRates: []restaurantapi.ConditionalTaxRate{}}
	d.TaxRates = []restaurantapi.TaxRate{state, city, bev, exempt}

	pre := restaurantapi.ServiceChargeServiceChargeCalculationPREDISCOUNT
	d.ServiceCharges = []restaurantapi.ServiceCharge{
		{Guid: g.guid(), EntityType: "ServiceCharge", ExternalId: g.externalID(), Name: "Large Party Gratuity",
			AmountType: restaurantapi.ServiceChargeAmountTypePERCENT, Percent: ptr(18.0), Gratuity: true,
			Criteria:        restaurantapi.ServiceChargeCriteria{MinCheckAmount: 0},
			ApplicableTaxes: []restaurantapi.TaxRate{}, ServiceChargeCalculation: &pre},
		{Guid: g.guid(), EntityType: "ServiceCharge", ExternalId: g.externalID(), Name: "Delivery Fee",
			AmountType: restaurantapi.ServiceChargeAmountTypeFIXED, Amount: ptr(4.99), Taxable: true,
			Criteria:        restaurantapi.ServiceChargeCriteria{MinCheckAmount: 15, Delivery: true, MinDeliveryDistance: ptr(0.5)},
			ApplicableTaxes: []restaurantapi.TaxRate{state, city}},
		{Guid: g.guid(), EntityType: "ServiceCharge", ExternalId: g.externalID(), Name: "Takeout Packaging",
			AmountType: restaurantapi.ServiceChargeAmountTypeFIXED, Amount: ptr(0.5), Taxable: true,
			Criteria:        restaurantapi.ServiceChargeCriteria{Takeout: true, MaxCheckAmount: ptr(100.0)},
			ApplicableTaxes: []restaurantapi.TaxRate{state}},
		{Guid: g.guid(), EntityType: "ServiceCharge", ExternalId: g.externalID(), Name: "Event Service Charge",
			AmountType: restaurantapi.ServiceChargeAmountTypeOPEN, ApplicableTaxes: []restaurantapi.TaxRate{}},
	}

	standard := restaurantapi.PreModifierGroup{Guid: g.guid(), EntityType: "PreModifierGroup", Name: "Standard", IsDefault: true}
	allergy := restaurantapi.PreModifierGroup{Guid: g.guid(), EntityType: "PreModifierGroup", Name: "Allergy Notes"}
	d.PreModifierGroups = []restaurantapi.PreModifierGroup{standard, allergy}
	for _, p := range []struct {
		name        string
		scale       bool
		base        float64
		factor      float32
		mode        restaurantapi.PreModifierDisplayMode
		parentGroup restaurantapi.PreModifierGroup
	}{
		{"No", false, 0, 1, restaurantapi.PreModifierDisplayModePREFIX, standard},
		{"Extra", true, 0, 1.5, restaurantapi.PreModifierDisplayModePREFIX, standard},
		{"Light", true, 0, 0.5, restaurantapi.PreModifierDisplayModePREFIX, standard},
		{"on the Side", false, 0.25, 1, restaurantapi.PreModifierDisplayModeSUFFIX, standard},
		{"Gluten-Free", false, 2, 1, restaurantapi.PreModifierDisplayModePREFIX, allergy},
	} {
		d.PreModifiers = append(d.PreModifiers, restaurantapi.PreModifier{Guid: g.guid(), EntityType: "PreModifier",
			Name: p.name, ScalePrice: p.scale, BasePrice: p.base, ScaleFactor: p.factor, DisplayMode: p.mode,
			Parent: ref(p.parentGroup.Guid, "PreModifierGroup")})
	}
}

// demoModifierGroups are the modifier groups of the demo menus, with their
// options (which are menu items) and selection bounds.
var demoModifierGroups = []struct {
	name     string
	options  []string
	min, max int // max 0: no maximum
}{
	{"Temperature", []string{"Rare", "Medium Rare", "Medium", "Medium Well", "Well Done"}, 1, 1},
	{"Side Choice", []string{"French Fries", "Side Salad", "Sweet Potato Fries", "Onion Rings", "Coleslaw"}, 1, 1},
	{"Add-ons", []string{"Bacon", "Avocado", "Aged Cheddar", "Fried Egg", "Caramelized Onions"}, 0, 0},
	{"Dressing", []string{"Ranch", "Balsamic Vinaigrette", "Caesar", "Blue Cheese"}, 0, 1},
	{"Milk", []string{"Whole Milk", "Oat Milk", "Almond Milk", "Skim Milk"}, 0, 1},
	{"Size", []string{"Small", "Medium", "Large"}, 1, 1},
}

// demoCategories are the menu group themes: dish nouns and the modifier
// groups (by name) their items offer.
var demoCategories = []struct {
	name      string
	dishes    []string
	modifiers []string
}{
	{"Appetizers", []string{"Wings", "Calamari", "Nachos", "Bruschetta", "Spring Rolls", "Dumplings"}, []string{"Dressing"}},
	{"Salads", []string{"Caesar Salad", "Cobb Salad", "Greek Salad", "Kale Salad", "Wedge Salad"}, []string{"Dressing", "Add-ons"}},
	{"Burgers", []string{"Burger", "Cheeseburger", "Turkey Burger", "Veggie Burger", "Smash Burger"}, []string{"Temperature", "Side Choice", "Add-ons"}},
	{"Sandwiches", []string{"Club Sandwich", "Reuben", "BLT", "Chicken Sandwich", "Grilled Cheese", "Cuban"}, []string{"Side Choice", "Add-ons"}},
	{"Pasta", []string{"Linguine", "Rigatoni", "Gnocchi", "Lasagna", "Carbonara", "Ravioli"}, []string{"Add-ons"}},
	{"Entrees", []string{"Roast Chicken", "Pork Chop", "Short Rib", "Salmon", "Risotto", "Duck Breast"}, []string{"Side Choice"}},
	{"Steaks", []string{"Ribeye", "New York Strip", "Filet Mignon", "Flank Steak", "Porterhouse"}, []string{"Temperature", "Side Choice"}},
	{"Soups", []string{"Tomato Soup", "Clam Chowder", "French Onion Soup", "Chicken Noodle Soup", "Minestrone"}, nil},
	{"Breakfast", []string{"Omelette", "Pancakes", "Waffles", "Eggs Benedict", "French Toast", "Breakfast Burrito"}, []string{"Add-ons"}},
	{"Desserts", []string{"Cheesecake", "Brownie Sundae", "Creme Brulee", "Apple Pie", "Tiramisu"}, nil},
	{"Coffee & Tea", []string{"Latte", "Cappuccino", "Americano", "Chai Latte", "Mocha", "Cold Brew"}, []string{"Milk", "Size"}},
	{"Cocktails", []string{"Margarita", "Old Fashioned", "Negroni", "Mojito", "Martini", "Paloma"}, nil},
	{"Beer & Wine", []string{"IPA", "Lager", "Stout", "Pinot Noir", "Chardonnay", "Rose"}, []string{"Size"}},
}

var demoAdjectives = []string{"Classic", "Smoked", "Spicy", "House", "Grilled", "Crispy", "Roasted", "Seasonal", "Garden", "Signature", "Farmhouse", "Chef's"}

var demoMenuNames = []string{"Lunch", "Dinner", "Brunch", "Drinks", "Happy Hour", "Late Night", "Kids", "Catering"}

// menus fills the menus, their groups (every fifth one nested in the group
// before), the modifier groups and itemCount menu items, modifiers included.
func (g *demoGen) menus(d *Document, itemCount int) {
	// Modifier groups come first, as far as a quarter of the items allows.
	optionGroups := map[string]restaurantapi.ExternalReference{}
	budget := itemCount / 4
	for _, mg := range demoModifierGroups {
		if len(mg.options) > budget {
			break
		}
		budget -= len(mg.options)
		group := restaurantapi.MenuOptionGroup{Guid: g.guid(), EntityType: "MenuOptionGroup", ExternalId: g.externalID(),
			Name: mg.name, MinSelections: mg.min, Options: []restaurantapi.ExternalReference{}}
		if mg.max > 0 {
			group.MaxSelections = ptr(mg.max)
		}
		for _, o := range mg.options {
			item := g.item(o, nil)
			item.Calories = ptr(10 + 10*g.rng.IntN(30))
			d.MenuItems = append(d.MenuItems, item)
			group.Options = append(group.Options, extRef(item.Guid, "MenuItem", item.ExternalId))
		}
		d.MenuOptionGroups = append(d.MenuOptionGroups, group)
		optionGroups[mg.name] = extRef(group.Guid, "MenuOptionGroup", group.ExternalId)
	}
	regular := itemCount - len(d.MenuItems)
	if regular <= 0 {
		return
	}

	menuCount := min(max(regular/100, 1), len(demoMenuNames))
	for i := range menuCount {
		d.Menus = append(d.Menus, restaurantapi.Menu{Guid: g.guid(), EntityType: "Menu", ExternalId: g.externalID(),
			Name: demoMenuNames[i], OrderableOnline: restaurantapi.OrderableOnlineYES, Visibility: restaurantapi.VisibilityALL,
			Groups: []restaurantapi.ExternalReference{}, UnitOfMeasure: restaurantapi.UnitOfMeasureNONE,
			Images: []restaurantapi.Image{{Url: fmt.Sprintf("https://images.example.com/menus/%d.jpg", i+1)}}})
	}
	groupCount := max(regular/25, 1)
	groupIdx := make([]int, groupCount) // index in d.MenuGroups
	groupCategory := make([]int, groupCount)
	seen := map[string]int{}
	for i := range groupCount {
		mi := i % menuCount
		menu := &d.Menus[mi]
		cat := (i/menuCount + 3*mi) % len(demoCategories)
		name := demoCategories[cat].name
		seen[name]++
		if seen[name] > 1 {
			name = fmt.Sprintf("%s %d", name, seen[name])
		}
		group := restaurantapi.MenuGroup{Guid: g.guid(), EntityType: "MenuGroup", ExternalId: g.externalID(), Name: name,
			Menu: extRef(menu.Guid, "Menu", menu.ExternalId), Items: []restaurantapi.ExternalReference{},
			Subgroups: []restaurantapi.ExternalReference{}, OptionGroups: []restaurantapi.ExternalReference{},
			InheritOptionGroups: false, Images: []restaurantapi.Image{}, UnitOfMeasure: restaurantapi.UnitOfMeasureNONE,
			InheritUnitOfMeasure: true, OrderableOnline: restaurantapi.OrderableOnlineYES, Visibility: restaurantapi.VisibilityALL}
		for _, m := range demoCategories[cat].modifiers {
			if og, ok := optionGroups[m]; ok {
				group.OptionGroups = append(group.OptionGroups, og)
			}
		}
		// Every fifth group of a menu is a subgroup of that menu's group before it.
		if i >= menuCount && (i/menuCount)%5 == 4 {
			parentIdx := groupIdx[i-menuCount]
			parent := &d.MenuGroups[parentIdx]
			group.Parent = ptr(extRef(parent.Guid, "MenuGroup", parent.ExternalId))
			group.InheritOptionGroups = true
			parent.Subgroups = append(parent.Subgroups, extRef(group.Guid, "MenuGroup", group.ExternalId))
		} else {
			menu.Groups = append(menu.Groups, extRef(group.Guid, "MenuGroup", group.ExternalId))
		}
		groupIdx[i] = len(d.MenuGroups)
		groupCategory[i] = cat
		d.MenuGroups = append(d.MenuGroups, group)
	}
	for i := range regular {
		gi := i % groupCount
		cat := demoCategories[groupCategory[gi]]
		name := demoAdjectives[(i/groupCount)%len(demoAdjectives)] + " " + cat.dishes[(i/groupCount/len(demoAdjectives)+gi)%len(cat.dishes)]
		if round := i / groupCount / (len(demoAdjectives) * len(cat.dishes)); round > 0 {
			name = fmt.Sprintf("%s No. %d", name, round+1)
		}
		var own []restaurantapi.ExternalReference
		if og, ok := optionGroups["Add-ons"]; ok && i%7 == 3 {
			own = []restaurantapi.ExternalReference{og}
		}
		item := g.item(name, own)
		switch {
		case i%11 == 5:
			item.Visibility = restaurantapi.VisibilityPOSONLY
			item.OrderableOnline = restaurantapi.OrderableOnlineNO
		case i%13 == 7:
			item.UnitOfMeasure = restaurantapi.UnitOfMeasureLB
			item.InheritUnitOfMeasure = false
		}
		if i == 0 {
			item.Name, item.Type, item.Calories = "Gift Card", restaurantapi.MenuItemTypeGIFTCARD, nil
		}
		if i%3 == 0 {
			item.Images = []restaurantapi.Image{{Url: "https://images.example.com/items/" + item.Guid + ".jpg"}}
		}
		d.MenuItems = append(d.MenuItems, item)
		group := &d.MenuGroups[groupIdx[gi]]
		group.Items = append(group.Items, extRef(item.Guid, "MenuItem", item.ExternalId))
	}
}

// item returns a menu item with its own option groups (none: it inherits
// its group's).
func (g *demoGen) item(name string, own []restaurantapi.ExternalReference) restaurantapi.MenuItem {
	g.n++
	inherit := own == nil
	if own == nil {
		own = []restaurantapi.ExternalReference{}
	}
	ext := fmt.Sprintf("pos:%d", 100000+g.n)
	return restaurantapi.MenuItem{Guid: g.guid(), EntityType: "MenuItem", ExternalId: &ext, Name: name,
		Calories: ptr(90 + 10*g.rng.IntN(120)), Sku: fmt.Sprintf("SKU-%06d", g.n), Plu: fmt.Sprintf("%05d", g.n%100000),
		Type: restaurantapi.MenuItemTypeNONE, OptionGroups: own, InheritOptionGroups: inherit, Images: []restaurantapi.Image{},
		UnitOfMeasure: restaurantapi.UnitOfMeasureNONE, InheritUnitOfMeasure: true,
		OrderableOnline: restaurantapi.OrderableOnlineYES, Visibility: restaurantapi.VisibilityALL}
}
