-- wrk script of the Switchboard benchmark: POSTs BENCH_BODY with the headers in BENCH_HEADERS (JSON object of
-- strings, flat), checks every response (status 200 and the usage marker BENCH_MARKER in the body) and prints one
-- JSON line with the counts and latency percentiles (microseconds) when done.

local body = os.getenv("BENCH_BODY")
local marker = os.getenv("BENCH_MARKER")

wrk.method = "POST"
wrk.body = body
for k, v in string.gmatch(os.getenv("BENCH_HEADERS"), '"([^"]+)":"([^"]*)"') do
	wrk.headers[k] = v
end

local threads = {}

function setup(thread)
	table.insert(threads, thread)
end

function init(args)
	bad_status = 0
	bad_body = 0
	sample = ""
end

function response(status, headers, resp)
	if status ~= 200 then
		bad_status = bad_status + 1
		if sample == "" then sample = "status " .. status .. ": " .. string.sub(resp or "", 1, 200) end
	elseif not string.find(resp or "", marker, 1, true) then
		bad_body = bad_body + 1
		if sample == "" then sample = "no usage: " .. string.sub(resp or "", 1, 200) end
	end
end

local function esc(s)
	return (string.gsub(s, '[%c"\\]', function(c) return string.format("\\u%04x", string.byte(c)) end))
end

function done(summary, latency, requests)
	local bs, bb, samples = 0, 0, {}
	for _, t in ipairs(threads) do
		bs = bs + t:get("bad_status")
		bb = bb + t:get("bad_body")
		local s = t:get("sample")
		if s ~= "" then table.insert(samples, '"' .. esc(s) .. '"') end
	end
	local e = summary.errors
	io.write(string.format(
		'{"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"bad_status":%d,"bad_body":%d,'
			.. '"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%f,"samples":[%s]}\n',
		summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, bs, bb,
		latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
		table.concat(samples, ",")))
end
