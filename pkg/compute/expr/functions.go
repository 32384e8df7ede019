package expr

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// funcs is the immutable function table, indexed by Func.
var funcs = [funcCount]funcDef{
	FuncNot:    {name: "not", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeBool1, eval1: evalNot},
	FuncIsNull: {name: "is_null", minArgs: 1, maxArgs: 1, typeOf: typeIsNull, eval1: evalIsNull},
	FuncNullIf: {name: "nullif", minArgs: 2, maxArgs: 2, typeOf: typeNullIf, eval2: evalNullIf},

	FuncEq:  {name: "eq", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeCompare, eval2: cmpFunc(func(c int) bool { return c == 0 })},
	FuncNeq: {name: "neq", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeCompare, eval2: cmpFunc(func(c int) bool { return c != 0 })},
	FuncLt:  {name: "lt", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeCompare, eval2: cmpFunc(func(c int) bool { return c < 0 })},
	FuncLte: {name: "lte", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeCompare, eval2: cmpFunc(func(c int) bool { return c <= 0 })},
	FuncGt:  {name: "gt", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeCompare, eval2: cmpFunc(func(c int) bool { return c > 0 })},
	FuncGte: {name: "gte", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeCompare, eval2: cmpFunc(func(c int) bool { return c >= 0 })},

	FuncNeg: {name: "neg", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeNeg, eval1: evalNeg},
	FuncAdd: {name: "add", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArith("+"), eval2: evalAdd},
	FuncSub: {name: "sub", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArith("-"), eval2: evalSub},
	FuncMul: {name: "mul", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArith("*"), eval2: evalMul},
	FuncDiv: {name: "div", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArith("/"), eval2: evalDiv},
	FuncMod: {name: "mod", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeNumeric2, eval2: evalMod},

	FuncAbs:   {name: "abs", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeNumeric1, eval1: evalAbs},
	FuncRound: {name: "round", minArgs: 1, maxArgs: 2, strict: true, typeOf: typeRound, eval1: evalRound1, eval2: evalRound2},
	FuncFloor: {name: "floor", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeNumeric1, eval1: floatUnary(math.Floor, false)},
	FuncCeil:  {name: "ceil", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeNumeric1, eval1: floatUnary(math.Ceil, true)},
	FuncSqrt:  {name: "sqrt", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeSqrt, eval1: evalSqrt},
	FuncPower: {name: "power", minArgs: 2, maxArgs: 2, strict: true, typeOf: typePower, eval2: evalPower},

	FuncLower:    {name: "lower", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeText(1, row.TypeText), eval1: textUnary(strings.ToLower)},
	FuncUpper:    {name: "upper", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeText(1, row.TypeText), eval1: textUnary(strings.ToUpper)},
	FuncLength:   {name: "length", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeLength, eval1: evalLength},
	FuncConcatOp: {name: "concat_op", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeAnyToText, eval2: evalConcatOp},
	FuncConcat:   {name: "concat", minArgs: 1, maxArgs: -1, typeOf: typeConcat, evalN: evalConcat},
	FuncTrim:     {name: "btrim", minArgs: 1, maxArgs: 2, strict: true, typeOf: typeText(2, row.TypeText), eval1: trim1(strings.Trim), eval2: trim2(strings.Trim)},
	FuncLTrim:    {name: "ltrim", minArgs: 1, maxArgs: 2, strict: true, typeOf: typeText(2, row.TypeText), eval1: trim1(strings.TrimLeft), eval2: trim2(strings.TrimLeft)},
	FuncRTrim:    {name: "rtrim", minArgs: 1, maxArgs: 2, strict: true, typeOf: typeText(2, row.TypeText), eval1: trim1(strings.TrimRight), eval2: trim2(strings.TrimRight)},
	FuncReplace:  {name: "replace", minArgs: 3, maxArgs: 3, strict: true, typeOf: typeText(3, row.TypeText), eval3: evalReplace},
	FuncPosition: {name: "position", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeText(2, row.TypeInt64), eval2: evalPosition},
	FuncSubstr:   {name: "substr", minArgs: 2, maxArgs: 3, strict: true, typeOf: typeSubstr, eval2: evalSubstr2, eval3: evalSubstr3},
	FuncLike:     {name: "like", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeText(2, row.TypeBool), eval2: likeFunc(false)},
	FuncILike:    {name: "ilike", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeText(2, row.TypeBool), eval2: likeFunc(true)},
	FuncGreatest: {name: "greatest", minArgs: 1, maxArgs: -1, typeOf: typeExtreme, evalN: extremeFunc(1)},
	FuncLeast:    {name: "least", minArgs: 1, maxArgs: -1, typeOf: typeExtreme, evalN: extremeFunc(-1)},

	FuncSingleValue: {name: "single_value", minArgs: 2, maxArgs: 2, typeOf: typeSingleValue, eval2: evalSingleValue},
	FuncRegexMatch:  {name: "regex_match", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeText(2, row.TypeBool), eval2: evalRegexMatch},

	FuncInt2: {name: "int2", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeNarrowInt("int2"), eval1: narrowInt(int2Range)},
	FuncInt4: {name: "int4", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeNarrowInt("int4"), eval1: narrowInt(int4Range)},

	FuncTimezone:       {name: "timezone", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeTimezone, eval2: evalTimezone},
	FuncTimestampTZIn:  {name: "timestamptz_in", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeSig2(row.TypeText, row.TypeText, row.TypeTimestampTZ), eval2: evalTimestampTZIn},
	FuncTimestampTZOut: {name: "timestamptz_out", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeSig2(row.TypeTimestampTZ, row.TypeText, row.TypeText), eval2: evalTimestampTZOut},
	FuncTZPlus:         {name: "tz_plus", minArgs: 3, maxArgs: 3, strict: true, typeOf: typeTZPlus, eval3: evalTZPlus},
	FuncDatePart:       {name: "date_part", minArgs: 2, maxArgs: 3, strict: true, typeOf: typeDatePart, evalN: evalDatePart},
	FuncExtract:        {name: "extract", minArgs: 2, maxArgs: 3, strict: true, typeOf: typeExtract, evalN: evalExtract},
	FuncDateTrunc:      {name: "date_trunc", minArgs: 2, maxArgs: 3, strict: true, typeOf: typeDateTrunc, evalN: evalDateTrunc},
	FuncToChar:         {name: "to_char", minArgs: 2, maxArgs: 3, strict: true, typeOf: typeToChar, evalN: evalToChar},
	FuncAge:            {name: "age", minArgs: 2, maxArgs: 3, strict: true, typeOf: typeAge, evalN: evalAge},
	FuncMakeDate:       {name: "make_date", minArgs: 3, maxArgs: 3, strict: true, typeOf: typeMake(row.TypeDate, 3), evalN: evalMakeDate},
	FuncMakeTime:       {name: "make_time", minArgs: 3, maxArgs: 3, strict: true, typeOf: typeMake(row.TypeTime, 2), evalN: evalMakeTime},
	FuncMakeTimestamp:  {name: "make_timestamp", minArgs: 6, maxArgs: 6, strict: true, typeOf: typeMake(row.TypeTimestamp, 5), evalN: evalMakeTimestamp},
	FuncToTimestamp:    {name: "to_timestamp", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeMake(row.TypeTimestampTZ, 0), eval1: evalToTimestamp},
	FuncTimePrecision:  {name: "time_precision", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeTimePrecision, eval2: evalTimePrecision},
	FuncTrunc:          {name: "trunc", minArgs: 1, maxArgs: 2, strict: true, typeOf: typeTrunc, eval1: evalTrunc1, eval2: evalTrunc2},
	FuncSign:           {name: "sign", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeNumeric1, eval1: evalSign},
	FuncDivTrunc:       {name: "div_trunc", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeNumericOnly(2), eval2: evalDivTrunc},
	FuncExp:            {name: "exp", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeSqrt, eval1: evalExp},
	FuncLn:             {name: "ln", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeSqrt, eval1: evalLn},
	FuncLog10:          {name: "log10", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeSqrt, eval1: evalLog10},
	FuncTrimScale:      {name: "trim_scale", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeNumericOnly(1), eval1: evalTrimScale},
	FuncNumericTypmod:  {name: "numeric_typmod", minArgs: 3, maxArgs: 3, strict: true, typeOf: typeNumericTypmod, eval3: evalNumericTypmod},
	FuncVarchar:        {name: "varchar", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeCharN, eval2: evalCharN(false, false)},
	FuncBpchar:         {name: "bpchar", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeCharN, eval2: evalCharN(true, false)},
	FuncVarcharAssign:  {name: "varchar_assign", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeCharN, eval2: evalCharN(false, true)},
	FuncBpcharAssign:   {name: "bpchar_assign", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeCharN, eval2: evalCharN(true, true)},
	FuncNumericVar:     {name: "numeric_var", minArgs: 5, maxArgs: 5, strict: true, typeOf: typeNumericVar, evalN: evalNumericVar},
	FuncSplitPart:      {name: "split_part", minArgs: 3, maxArgs: 3, strict: true, typeOf: typeArgs("split_part", row.TypeText, row.TypeText, row.TypeText, row.TypeInt64), eval3: evalSplitPart},
	FuncConcatWS:       {name: "concat_ws", minArgs: 1, maxArgs: -1, typeOf: typeConcat, evalN: evalConcatWS},
	FuncLPad:           {name: "lpad", minArgs: 2, maxArgs: 3, strict: true, typeOf: typeTextIntText, evalN: padFunc(true)},
	FuncRPad:           {name: "rpad", minArgs: 2, maxArgs: 3, strict: true, typeOf: typeTextIntText, evalN: padFunc(false)},
	FuncLeft:           {name: "left", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeTextInt, eval2: leftRight(true)},
	FuncRight:          {name: "right", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeTextInt, eval2: leftRight(false)},
	FuncInitcap:        {name: "initcap", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeText(1, row.TypeText), eval1: evalInitcap},
	FuncMD5:            {name: "md5", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeMD5, eval1: evalMD5},
	FuncFormat:         {name: "format", minArgs: 1, maxArgs: -1, typeOf: typeConcat, evalN: evalFormat},
	FuncRegexpReplace:  {name: "regexp_replace", minArgs: 3, maxArgs: 4, strict: true, typeOf: typeText(4, row.TypeText), evalN: evalRegexpReplace},
	FuncRegexpLike:     {name: "regexp_like", minArgs: 2, maxArgs: 3, strict: true, typeOf: typeText(3, row.TypeBool), evalN: evalRegexpLike},
	FuncRepeat:         {name: "repeat", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeTextInt, eval2: evalRepeat},
	FuncReverse:        {name: "reverse", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeText(1, row.TypeText), eval1: evalReverse},
	FuncTranslate:      {name: "translate", minArgs: 3, maxArgs: 3, strict: true, typeOf: typeText(3, row.TypeText), eval3: evalTranslate},
	FuncASCII:          {name: "ascii", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeText(1, row.TypeInt64), eval1: evalASCII},
	FuncChr:            {name: "chr", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeArgs("chr", row.TypeText, row.TypeInt64), eval1: evalChr},
	FuncNumericText:    {name: "numeric_text", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArgs("numeric_text", row.TypeText, row.TypeNumeric, row.TypeInt64), eval2: evalNumericText},
	FuncNumericKey:     {name: "numeric_key", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeNumericKey, eval1: evalNumericKey},
	FuncLog:            {name: "log", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeNumericOnly(2), eval2: evalLog},
	FuncCbrt:           {name: "cbrt", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeFloatAny1, eval1: floatMath("cbrt", math.Cbrt)},
	FuncDegrees:        {name: "degrees", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeFloatAny1, eval1: floatMath("degrees", func(x float64) float64 { return x / radiansPerDegree })},
	FuncRadians:        {name: "radians", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeFloatAny1, eval1: floatMath("radians", func(x float64) float64 { return x * radiansPerDegree })},
	FuncPi:             {name: "pi", minArgs: 0, maxArgs: 0, typeOf: typePi, evalN: evalPi},
	FuncStartsWith:     {name: "starts_with", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeText(2, row.TypeBool), eval2: evalStartsWith},

	FuncJSONGet:         {name: "jsonb_get", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeJSONGet(row.TypeJSONB), eval2: evalJSONGet},
	FuncJSONGetText:     {name: "jsonb_get_text", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeJSONGet(row.TypeText), eval2: evalJSONGetText},
	FuncJSONPath:        {name: "jsonb_extract_path", minArgs: 1, maxArgs: -1, strict: true, typeOf: typeJSONPath(row.TypeJSONB), evalN: evalJSONPath},
	FuncJSONPathText:    {name: "jsonb_extract_path_text", minArgs: 1, maxArgs: -1, strict: true, typeOf: typeJSONPath(row.TypeText), evalN: evalJSONPathText},
	FuncJSONContains:    {name: "jsonb_contains", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeSig2(row.TypeJSONB, row.TypeJSONB, row.TypeBool), eval2: evalJSONContains},
	FuncJSONExists:      {name: "jsonb_exists", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeSig2(row.TypeJSONB, row.TypeText, row.TypeBool), eval2: evalJSONExists},
	FuncJSONConcat:      {name: "jsonb_concat", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeSig2(row.TypeJSONB, row.TypeJSONB, row.TypeJSONB), eval2: evalJSONConcat},
	FuncJSONDelete:      {name: "jsonb_delete", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeJSONDelete, eval2: evalJSONDelete},
	FuncJSONTypeof:      {name: "jsonb_typeof", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeSig1(row.TypeJSONB, row.TypeText), eval1: evalJSONTypeof},
	FuncJSONArrayLength: {name: "jsonb_array_length", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeSig1(row.TypeJSONB, row.TypeInt64), eval1: evalJSONArrayLength},
	FuncToJSONB:         {name: "to_jsonb", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeToJSONB, eval1: evalToJSONB},
	FuncJSONBuildArray:  {name: "jsonb_build_array", minArgs: 0, maxArgs: -1, typeOf: typeToJSONB, evalN: evalJSONBuildArray},
	FuncJSONBuildObject: {name: "jsonb_build_object", minArgs: 0, maxArgs: -1, typeOf: typeToJSONB, evalN: evalJSONBuildObject},
	FuncJSONNumber:      {name: "jsonb_number", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeSig2(row.TypeNumeric, row.TypeInt64, row.TypeJSONB), eval2: evalJSONNumber},

	FuncArray:         {name: "array", minArgs: 1, maxArgs: -1, typeOf: typeArray, evalN: evalArray},
	FuncArrayElem:     {name: "array_elem", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArrayElem, eval2: evalArrayElem},
	FuncArrayLength:   {name: "array_length", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArrayLength, eval2: evalArrayLength},
	FuncCardinality:   {name: "cardinality", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeCardinality, eval1: evalCardinality},
	FuncArrayNarrow:   {name: "array_narrow", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeSig2(row.TypeInt64Array, row.TypeInt64, row.TypeInt64Array), eval2: evalArrayNarrow},
	FuncArrayCmpAny:   {name: "array_cmp_any", minArgs: 4, maxArgs: 4, typeOf: typeArrayCmpAny, evalN: evalArrayCmpAny},
	FuncArrayCat:      {name: "array_cat", minArgs: 2, maxArgs: 2, typeOf: typeArrayCat, eval2: evalArrayCat},
	FuncArrayContains: {name: "array_contains", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArrayContains, eval2: evalArrayContains},
	FuncArrayOverlap:  {name: "array_overlap", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArrayOverlap, eval2: evalArrayOverlap},
	FuncArrayPosition: {name: "array_position", minArgs: 2, maxArgs: 3, typeOf: typeArrayPosition, evalN: evalArrayPosition},
	FuncArrayUpper:    {name: "array_upper", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArrayBound("array_upper"), eval2: evalArrayBound(true)},
	FuncArrayLower:    {name: "array_lower", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeArrayBound("array_lower"), eval2: evalArrayBound(false)},
	FuncArrayToString: {name: "array_to_string", minArgs: 2, maxArgs: 3, typeOf: typeArrayToString, evalN: evalArrayToString},
	FuncStringToArray: {name: "string_to_array", minArgs: 2, maxArgs: 3, typeOf: typeStringToArray, evalN: evalStringToArray},
	FuncRegexpMatch:   {name: "regexp_match", minArgs: 2, maxArgs: 3, strict: true, typeOf: typeRegexpMatch, evalN: evalRegexpMatch},
	FuncBpcharPad:     {name: "bpchar_pad", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeBpcharPad, eval2: evalBpcharPad},
	FuncTimeShift:     {name: "time_shift", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeTimeShift, eval2: evalTimeShift},
	FuncTZArrayCast:   {name: "tz_array_cast", minArgs: 3, maxArgs: 3, typeOf: typeTZArrayCast, evalN: evalTZArrayCast},

	FuncJSONTextGet:      {name: "json_get", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeJSONGetOf(row.TypeJSON, row.TypeJSON), eval2: evalJSONTextGet},
	FuncJSONTextGetText:  {name: "json_get_text", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeJSONGetOf(row.TypeJSON, row.TypeText), eval2: evalJSONTextGetText},
	FuncJSONTextPath:     {name: "json_extract_path", minArgs: 1, maxArgs: -1, strict: true, typeOf: typeJSONPathOf(row.TypeJSON, row.TypeJSON), evalN: evalJSONTextPath},
	FuncJSONTextPathText: {name: "json_extract_path_text", minArgs: 1, maxArgs: -1, strict: true, typeOf: typeJSONPathOf(row.TypeJSON, row.TypeText), evalN: evalJSONTextPathText},
	FuncJSONTextTypeof:   {name: "json_typeof", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeSig1(row.TypeJSON, row.TypeText), eval1: evalJSONTextTypeof},

	FuncToJSON:              {name: "to_json", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeToJSON, eval1: evalToJSON},
	FuncJSONTextBuildArray:  {name: "json_build_array", minArgs: 0, maxArgs: -1, typeOf: typeToJSON, evalN: evalJSONTextBuildArray},
	FuncJSONTextBuildObject: {name: "json_build_object", minArgs: 0, maxArgs: -1, typeOf: typeToJSON, evalN: evalJSONTextBuildObject},
	FuncJSONTextArrayLength: {name: "json_array_length", minArgs: 1, maxArgs: 1, strict: true, typeOf: typeSig1(row.TypeJSON, row.TypeInt64), eval1: evalJSONTextArrayLength},
	FuncJSONValueText:       {name: "json_value_text", minArgs: 1, maxArgs: 1, typeOf: typeJSONValueText, eval1: evalJSONValueText},
	FuncJSONPairText:        {name: "json_pair_text", minArgs: 2, maxArgs: 2, typeOf: typeJSONValueText, eval2: evalJSONPairText},
	FuncJSONAggFinal:        {name: "json_agg_final", minArgs: 2, maxArgs: 2, strict: true, typeOf: typeSig2(row.TypeJSONB, row.TypeBool, row.TypeJSON), eval2: evalJSONAggFinal},
	FuncJSONRow:             {name: "json_row", minArgs: 1, maxArgs: -1, typeOf: typeJSONRow, evalN: evalJSONRow},
	FuncJSONObject:          {name: "json_object", minArgs: 1, maxArgs: 2, strict: true, typeOf: typeJSONObjectOf(row.TypeJSON), evalN: evalJSONObject},
	FuncJSONBObject:         {name: "jsonb_object", minArgs: 1, maxArgs: 2, strict: true, typeOf: typeJSONObjectOf(row.TypeJSONB), evalN: evalJSONBObject},

	FuncRecord:      {name: "row", minArgs: 0, maxArgs: -1, typeOf: typeRecord, evalN: evalRecord},
	FuncRecordField: {name: "record_field", minArgs: 3, maxArgs: 3, typeOf: typeRecordField, evalN: evalRecordField},
}

func undefinedFunc(name string, args ...row.Datum) *EvalError {
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.Type().String()
	}
	return evalErr(CodeUndefinedFunction, "function %s(%s) does not exist", name, strings.Join(names, ", "))
}

// ---- logic ----

func evalNot(a row.Datum) (row.Datum, error) {
	if a.Type() != row.TypeBool {
		return row.Null(), undefinedFunc("not", a)
	}
	return row.Bool(!a.Bool()), nil
}

func evalIsNull(a row.Datum) (row.Datum, error) { return row.Bool(a.IsNull()), nil }

// errSubqueryRows is Postgres' error for a scalar subquery with more than
// one row.
var errSubqueryRows = &EvalError{Code: CodeCardinalityViolation, Msg: "more than one row returned by a subquery used as an expression"}

func evalSingleValue(n, v row.Datum) (row.Datum, error) {
	if n.Type() == row.TypeInt64 && n.Int64() > 1 {
		return row.Null(), errSubqueryRows
	}
	return v, nil
}

func evalNullIf(a, b row.Datum) (row.Datum, error) {
	if a.IsNull() || b.IsNull() {
		return a, nil
	}
	c, err := compareDatums(a, b)
	if err != nil {
		return row.Null(), err
	}
	if c == 0 {
		return row.Null(), nil
	}
	return a, nil
}

// ---- comparison ----

// compareDatums compares values of the same type, or two numbers; int64
// and float64 compare exactly (not by rounding the integer to float64),
// with NaN above every number as in row.Compare.
func compareDatums(a, b row.Datum) (int, error) {
	ta, tb := a.Type(), b.Type()
	if ta == tb {
		if ta == row.TypeInterval {
			// Postgres compares intervals by length: '1 mon' = '30 days'.
			return a.Interval().CompareLength(b.Interval()), nil
		}
		if ta == row.TypeNumeric || ta == row.TypeNumericArray {
			// By value: 1.5 = 1.50 (the datums differ in scale).
			return row.Compare(a.NumericKey(), b.NumericKey()), nil
		}
		if ta == row.TypeJSONB {
			// jsonb numbers compare by value: 2.5 = 2.50.
			return row.CompareJSONB(a, b), nil
		}
		if ta == row.TypeRecord {
			return compareRecords(a, b)
		}
		return row.Compare(a, b), nil
	}
	if ta == row.TypeInt64 && tb == row.TypeFloat64 {
		return compareIntFloat(a.Int64(), b.Float64()), nil
	}
	if ta == row.TypeFloat64 && tb == row.TypeInt64 {
		return -compareIntFloat(b.Int64(), a.Float64()), nil
	}
	if ta == row.TypeNumeric || tb == row.TypeNumeric {
		return compareNumeric(a, b)
	}
	return 0, evalErr(CodeUndefinedFunction, "operator does not exist: %s = %s", ta.PGName(), tb.PGName())
}

// compareIntFloat compares i with f exactly.
func compareIntFloat(i int64, f float64) int {
	switch {
	case math.IsNaN(f) || f >= 0x1p63:
		return -1
	case f < -0x1p63:
		return 1
	}
	// f is within int64 range, so its integer part converts exactly.
	t := math.Trunc(f)
	ti := int64(t)
	switch {
	case i < ti:
		return -1
	case i > ti:
		return 1
	case f > t:
		return -1
	case f < t:
		return 1
	}
	return 0
}

func cmpFunc(ok func(int) bool) func(a, b row.Datum) (row.Datum, error) {
	return func(a, b row.Datum) (row.Datum, error) {
		c, err := compareDatums(a, b)
		if err != nil {
			return row.Null(), err
		}
		return row.Bool(ok(c)), nil
	}
}

// ---- arithmetic ----

func asFloat(d row.Datum) (float64, bool) {
	switch d.Type() {
	case row.TypeFloat64:
		return d.Float64(), true
	case row.TypeInt64:
		return float64(d.Int64()), true
	case row.TypeNumeric:
		f, err := numericToFloat(d.Decimal())
		return f, err == nil
	default:
		return 0, false
	}
}

// arith applies fi to two int64s, or ff to two numbers of which one is a
// float64.
func arith(op string, a, b row.Datum, fi func(x, y int64) (int64, error), ff func(x, y float64) (float64, error)) (row.Datum, error) {
	if a.Type() == row.TypeInt64 && b.Type() == row.TypeInt64 {
		r, err := fi(a.Int64(), b.Int64())
		if err != nil {
			return row.Null(), err
		}
		return row.Int64(r), nil
	}
	if (a.Type() == row.TypeNumeric || b.Type() == row.TypeNumeric) && a.Type() != row.TypeFloat64 && b.Type() != row.TypeFloat64 {
		return numericArith(op, a, b)
	}
	fa, ok1 := asFloat(a)
	fb, ok2 := asFloat(b)
	if !ok1 || !ok2 {
		return row.Null(), evalErr(CodeUndefinedFunction, "operator does not exist: %s %s %s", a.Type().PGName(), op, b.Type().PGName())
	}
	r, err := ff(fa, fb)
	if err != nil {
		return row.Null(), err
	}
	return row.Float64(r), nil
}

// checkFloat reports overflow (an infinite result from finite operands)
// and underflow (zero from non-zero operands where that cannot be exact),
// as Postgres' float8 operators do.
func checkFloat(r float64, inputsInf bool, zeroOK bool) (float64, error) {
	if math.IsInf(r, 0) && !inputsInf {
		return 0, errFloatOverflow
	}
	if r == 0 && !zeroOK {
		return 0, errFloatUnderflow
	}
	return r, nil
}

func isInf2(x, y float64) bool { return math.IsInf(x, 0) || math.IsInf(y, 0) }

func evalAdd(a, b row.Datum) (row.Datum, error) {
	if a.Type().IsTemporal() || b.Type().IsTemporal() {
		return evalTemporal("+", a, b)
	}
	return arith("+", a, b,
		func(x, y int64) (int64, error) {
			r := x + y
			if (y > 0 && r < x) || (y < 0 && r > x) {
				return 0, errBigintRange
			}
			return r, nil
		},
		func(x, y float64) (float64, error) { return checkFloat(x+y, isInf2(x, y), true) })
}

func evalSub(a, b row.Datum) (row.Datum, error) {
	if a.Type().IsTemporal() || b.Type().IsTemporal() {
		return evalTemporal("-", a, b)
	}
	return arith("-", a, b,
		func(x, y int64) (int64, error) {
			r := x - y
			if (y > 0 && r > x) || (y < 0 && r < x) {
				return 0, errBigintRange
			}
			return r, nil
		},
		func(x, y float64) (float64, error) { return checkFloat(x-y, isInf2(x, y), true) })
}

func mulInt(x, y int64) (int64, error) {
	if x == 0 || y == 0 {
		return 0, nil
	}
	r := x * y
	if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
		return 0, errBigintRange
	}
	return r, nil
}

func evalMul(a, b row.Datum) (row.Datum, error) {
	if a.Type().IsTemporal() || b.Type().IsTemporal() {
		return evalTemporal("*", a, b)
	}
	return arith("*", a, b, mulInt,
		func(x, y float64) (float64, error) { return checkFloat(x*y, isInf2(x, y), x == 0 || y == 0) })
}

func evalDiv(a, b row.Datum) (row.Datum, error) {
	if a.Type().IsTemporal() || b.Type().IsTemporal() {
		return evalTemporal("/", a, b)
	}
	return arith("/", a, b,
		func(x, y int64) (int64, error) {
			switch {
			case y == 0:
				return 0, errDivisionByZero
			case y == -1 && x == math.MinInt64:
				return 0, errBigintRange
			}
			return x / y, nil
		},
		func(x, y float64) (float64, error) {
			if y == 0 {
				return 0, errDivisionByZero
			}
			return checkFloat(x/y, isInf2(x, y), x == 0 || math.IsInf(y, 0))
		})
}

func evalMod(a, b row.Datum) (row.Datum, error) {
	return arith("%", a, b,
		func(x, y int64) (int64, error) {
			if y == 0 {
				return 0, errDivisionByZero
			}
			return x % y, nil // Go defines MinInt64 % -1 == 0, as Postgres does
		},
		func(x, y float64) (float64, error) {
			if y == 0 {
				return 0, errDivisionByZero
			}
			return math.Mod(x, y), nil
		})
}

func evalNeg(a row.Datum) (row.Datum, error) {
	switch a.Type() {
	case row.TypeInt64:
		if a.Int64() == math.MinInt64 {
			return row.Null(), errBigintRange
		}
		return row.Int64(-a.Int64()), nil
	case row.TypeFloat64:
		return row.Float64(-a.Float64()), nil
	case row.TypeInterval:
		n, err := intervalNeg(a.Interval())
		if err != nil {
			return row.Null(), err
		}
		return row.IntervalDatum(n), nil
	case row.TypeNumeric:
		return numeric(new(apd.Decimal).Neg(a.DecimalDisplay()), nil)
	}
	return row.Null(), undefinedFunc("neg", a)
}

func evalAbs(a row.Datum) (row.Datum, error) {
	switch a.Type() {
	case row.TypeInt64:
		i := a.Int64()
		if i == math.MinInt64 {
			return row.Null(), errBigintRange
		}
		if i < 0 {
			i = -i
		}
		return row.Int64(i), nil
	case row.TypeFloat64:
		return row.Float64(math.Abs(a.Float64())), nil
	case row.TypeNumeric:
		return numeric(new(apd.Decimal).Abs(a.DecimalDisplay()), nil)
	}
	return row.Null(), undefinedFunc("abs", a)
}

// floatUnary applies f to a float64, and is the identity on int64 (floor
// and ceil of an integer); a numeric rounds up (ceil) or down.
func floatUnary(f func(float64) float64, up bool) func(a row.Datum) (row.Datum, error) {
	return func(a row.Datum) (row.Datum, error) {
		switch a.Type() {
		case row.TypeInt64:
			return a, nil
		case row.TypeFloat64:
			return row.Float64(f(a.Float64())), nil
		case row.TypeNumeric:
			return numericCeilFloor(a.Decimal(), up)
		}
		return row.Null(), undefinedFunc("floor/ceil", a)
	}
}

func evalRound1(a row.Datum) (row.Datum, error) {
	switch a.Type() {
	case row.TypeInt64:
		return a, nil
	case row.TypeFloat64:
		return row.Float64(math.RoundToEven(a.Float64())), nil
	case row.TypeNumeric:
		return numericRound(a.Decimal(), 0, false)
	}
	return row.Null(), undefinedFunc("round", a)
}

// evalRound2 rounds to digits decimal places (negative: to tens,
// hundreds...). Halfway cases round away from zero as Postgres' numeric
// round does; for float64 the decision is made on the exact binary
// value, so round(2.675, 2) is 2.67, as in any binary floating point.
func evalRound2(a, digits row.Datum) (row.Datum, error) {
	if digits.Type() != row.TypeInt64 {
		return row.Null(), undefinedFunc("round", a, digits)
	}
	n := digits.Int64()
	switch a.Type() {
	case row.TypeNumeric:
		return numericRound(a.Decimal(), n, false)
	case row.TypeInt64:
		if n >= 0 {
			return a, nil
		}
		if n < -18 {
			return row.Int64(0), nil
		}
		p := int64(1)
		for range -n {
			p *= 10
		}
		x := a.Int64()
		q, r := x/p, x%p
		if r >= (p+1)/2 {
			q++
		} else if -r >= (p+1)/2 {
			q--
		}
		v, err := mulInt(q, p)
		if err != nil {
			return row.Null(), err
		}
		return row.Int64(v), nil
	case row.TypeFloat64:
		x := a.Float64()
		if math.IsNaN(x) || math.IsInf(x, 0) || n > 330 {
			return a, nil
		}
		if n < 0 {
			p := math.Pow(10, float64(-n))
			if math.IsInf(p, 0) {
				return row.Float64(0), nil
			}
			return row.Float64(math.Round(x/p) * p), nil
		}
		s := strconv.FormatFloat(x, 'f', int(n), 64)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return row.Null(), evalErr(CodeNumericValueOutOfRange, "round: %v", err)
		}
		return row.Float64(v), nil
	}
	return row.Null(), undefinedFunc("round", a, digits)
}

func evalSqrt(a row.Datum) (row.Datum, error) {
	if a.Type() == row.TypeNumeric {
		return numericSqrt(a.DecimalDisplay())
	}
	x, ok := asFloat(a)
	if !ok {
		return row.Null(), undefinedFunc("sqrt", a)
	}
	if x < 0 {
		return row.Null(), evalErr(CodeInvalidArgumentForPower, "cannot take square root of a negative number")
	}
	return row.Float64(math.Sqrt(x)), nil
}

func evalPower(a, b row.Datum) (row.Datum, error) {
	if a.Type() == row.TypeNumeric || b.Type() == row.TypeNumeric {
		dx, ok1 := decimalOf(a)
		dy, ok2 := decimalOf(b)
		if !ok1 || !ok2 {
			return row.Null(), undefinedFunc("power", a, b)
		}
		return numericPower(dx, dy)
	}
	x, ok1 := asFloat(a)
	y, ok2 := asFloat(b)
	if !ok1 || !ok2 {
		return row.Null(), undefinedFunc("power", a, b)
	}
	switch {
	case x == 0 && y < 0:
		return row.Null(), evalErr(CodeInvalidArgumentForPower, "zero raised to a negative power is undefined")
	case x < 0 && y != math.Trunc(y) && !math.IsInf(y, 0):
		return row.Null(), evalErr(CodeInvalidArgumentForPower, "a negative number raised to a non-integer power yields a complex result")
	}
	r := math.Pow(x, y)
	r, err := checkFloat(r, isInf2(x, y), x == 0 || math.IsInf(y, -1) || (math.Abs(x) < 1 && math.IsInf(y, 1)) || math.IsInf(x, 0))
	if err != nil {
		return row.Null(), err
	}
	return row.Float64(r), nil
}

// ---- strings ----

func textUnary(f func(string) string) func(a row.Datum) (row.Datum, error) {
	return func(a row.Datum) (row.Datum, error) {
		if a.Type() != row.TypeText {
			return row.Null(), undefinedFunc("text function", a)
		}
		return row.Text(f(a.Text())), nil
	}
}

func evalLength(a row.Datum) (row.Datum, error) {
	switch a.Type() {
	case row.TypeText:
		return row.Int64(int64(utf8.RuneCountInString(a.Text()))), nil
	case row.TypeBytes:
		return row.Int64(int64(len(a.BytesString()))), nil
	}
	return row.Null(), undefinedFunc("length", a)
}

// textOf is the text form of a datum for || and concat: text as is,
// everything else in its output format.
func textOf(d row.Datum) string {
	if d.Type() == row.TypeText {
		return d.Text()
	}
	return d.String()
}

func evalConcatOp(a, b row.Datum) (row.Datum, error) {
	return row.Text(textOf(a) + textOf(b)), nil
}

func evalConcat(args []row.Datum) (row.Datum, error) {
	var sb strings.Builder
	for _, a := range args {
		if !a.IsNull() {
			sb.WriteString(textOf(a))
		}
	}
	return row.Text(sb.String()), nil
}

// trim1 trims spaces, as btrim(s) does.
func trim1(f func(s, cutset string) string) func(a row.Datum) (row.Datum, error) {
	return func(a row.Datum) (row.Datum, error) {
		if a.Type() != row.TypeText {
			return row.Null(), undefinedFunc("trim", a)
		}
		return row.Text(f(a.Text(), " ")), nil
	}
}

// trim2 trims every character of chars.
func trim2(f func(s, cutset string) string) func(a, chars row.Datum) (row.Datum, error) {
	return func(a, chars row.Datum) (row.Datum, error) {
		if a.Type() != row.TypeText || chars.Type() != row.TypeText {
			return row.Null(), undefinedFunc("trim", a, chars)
		}
		return row.Text(f(a.Text(), chars.Text())), nil
	}
}
