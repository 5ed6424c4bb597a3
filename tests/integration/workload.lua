-- SPDX-License-Identifier: MIT
-- lua5.4 workload for tests/integration/run_program.sh: tables as maps and
-- arrays, table.sort with a comparison, string.gsub/format/rep, closures,
-- coroutines, table.concat, and full garbage collections between rounds.
-- Reads the generated words file named by arg[1]; every walk over a map is
-- sorted (lua's string hashes are seeded per process), so the output
-- depends only on the input.
local count, lines, order = {}, {}, {}
for line in io.lines(arg[1]) do
  lines[#lines + 1] = line
  for w in line:gmatch("%S+") do
    if not count[w] then order[#order + 1] = w; count[w] = 0 end
    count[w] = count[w] + 1
  end
end
print(string.format("lines %d distinct %d", #lines, #order))

local keys = {}
for i, w in ipairs(order) do keys[i] = w end
table.sort(keys, function(a, b)
  if count[a] ~= count[b] then return count[a] > count[b] end
  return a < b
end)
for i = 1, 15 do print(string.format("top %-12s %d", keys[i], count[keys[i]])) end

-- A coroutine producing every word's vowel-doubled form; a closure counting.
local function producer()
  return coroutine.wrap(function()
    for _, line in ipairs(lines) do
      for w in line:gmatch("%S+") do coroutine.yield((w:gsub("[aeiou]", "%0%0"))) end
    end
  end)
end
local function counter()
  local n, len = 0, 0
  return function(s) n = n + 1; len = len + #s; return n, len end
end
local add = counter()
local n, len
for s in producer() do n, len = add(s) end
print(string.format("produced %d words of %d bytes", n, len))

-- Rounds: build a big nested table, walk it sorted, drop it, collect.
for round = 1, 6 do
  local tree, nodes = {}, 0
  for i = round, #lines, 6 do
    local node = tree
    local j = 0
    for w in lines[i]:gmatch("%S+") do
      j = j + 1
      if j > 3 then break end
      if not node[w] then node[w] = {}; nodes = nodes + 1 end
      node = node[w]
    end
    node["#"] = (node["#"] or 0) + #lines[i]
  end
  local function walk(t, depth)
    local ks, sum = {}, 0
    for k in pairs(t) do ks[#ks + 1] = k end
    table.sort(ks)
    for _, k in ipairs(ks) do
      if k == "#" then sum = sum + t[k] * depth else sum = sum + walk(t[k], depth + 1) end
    end
    return sum
  end
  print(string.format("round %d nodes %d weight %d", round, nodes, walk(tree, 1)))
  tree = nil
  collectgarbage("collect")
end

-- Long strings: table.concat of reversed lines, string.rep, string.format.
local out = {}
for i = #lines, 1, -1 do
  out[#out + 1] = string.format("%5d|%s|%s", i, lines[i]:upper(), string.rep("=", i % 17))
end
io.write(table.concat(out, "\n"), "\n")
