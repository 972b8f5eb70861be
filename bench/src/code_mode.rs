//! The code-mode benchmark (docs/code-mode.md, "Measured"): five multi-step tasks over a
//! fixture shop (30 orders in three pages, customers, products), each done two ways:
//!
//! - **direct**: the calls a model makes one by one, every request and every result
//!   passing through its context, plus the tool definitions it was given;
//! - **code**: one `run_code` call whose program makes the same calls, so only the program
//!   and its final value pass through the model, plus the `run_code` and `tool_search`
//!   definitions (`mode = "only"`).
//!
//! Tokens are counted with tiktoken's `o200k_base` ([`toolsmith_search::tokens`]): a tool
//! definition as `tools/list` sends it, a request as `{"name", "arguments"}` JSON, a result
//! as the text content the client hands the model. Both ways check they reach the same
//! answer. Wall time is the tools' own time in-process: the model's turns between direct
//! calls, which dominate in practice, are not counted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolsmith_folder::ToolFolder;
use toolsmith_model::{
    CallContext, Catalog, EvaluatorMode, EvaluatorSettings, JsonObject, RUN_CODE,
};
use toolsmith_search::tokens;

/// The fixture shop: paged orders, customers and products.
pub const SHOP: &str = r#"
def list_orders(page: int = 1) -> dict:
    """List the shop's orders, ten a page, newest first.

    Each order has an id, a customer id, a product id, a quantity, a unit price and a region.

    Args:
        page: Which page, from 1; the result's `next` is the following page or None.
    """
    start = (page - 1) * 10
    orders = []
    for i in range(start, min(start + 10, 30)):
        orders.append({
            "id": 1000 + i,
            "customer": 1 + (i * 7) % 12,
            "product": 1 + (i * 5) % 8,
            "quantity": 1 + i % 4,
            "unit_price": 5 + (i * 13) % 40,
            "region": ["north", "south", "east", "west"][i % 4],
            "status": "shipped" if i % 3 else "pending",
        })
    return {"orders": orders, "page": page, "next": page + 1 if start + 10 < 30 else None}

mcp.tool(list_orders, read_only = True)

def get_customer(id: int) -> dict:
    """Look up one customer: name, email, tier and the date they joined.

    Args:
        id: The customer's id, as an order names it.
    """
    tiers = ["gold", "silver", "bronze"]
    return {
        "id": id,
        "name": "Customer " + str(id),
        "email": "customer" + str(id) + "@example.com",
        "tier": tiers[id % 3],
        "joined": "2024-0" + str(1 + id % 9) + "-1" + str(id % 10),
    }

mcp.tool(get_customer, read_only = True)

def get_product(id: int) -> dict:
    """Look up one product: name, category, stock and supplier.

    Args:
        id: The product's id, as an order names it.
    """
    return {
        "id": id,
        "name": "Product " + str(id),
        "category": ["tools", "garden", "kitchen"][id % 3],
        "stock": (id * 3) % 11,
        "supplier": "Supplier " + str(1 + id % 4),
        "description": "A dependable product for everyday use, sold by the shop since 2020.",
    }

mcp.tool(get_product, read_only = True)
"#;

/// One task: what a model asks, the program code mode sends, and the same steps done as
/// direct calls.
pub struct Task {
    /// What the task is, for the table.
    pub name: &'static str,
    /// The `run_code` program after the loop that reads every page of orders
    /// ([`Task::program`]).
    pub after_pages: &'static str,
    /// The direct calls, made through `calls`; returns the answer.
    pub direct: fn(&mut Calls<'_>) -> Value,
}

impl Task {
    /// The whole `run_code` program.
    #[must_use]
    pub fn program(&self) -> String {
        format!("{PAGES}{}", self.after_pages)
    }
}

/// The tools of the shop as a model calls them directly, counting what passes through it.
pub struct Calls<'a> {
    catalog: &'a Catalog,
    /// Tokens of requests and results so far.
    pub tokens: usize,
    /// Tokens of each request with its result, in call order.
    pub exchanges: Vec<usize>,
    /// How many calls were made.
    pub calls: usize,
    /// Time spent in the tools.
    pub time: Duration,
}

impl Calls<'_> {
    /// Calls `name` with `arguments` and returns its structured result, counting the
    /// request and the result.
    ///
    /// # Panics
    ///
    /// When the tool fails: the fixture's tools never do.
    pub fn call(&mut self, name: &str, arguments: &Value) -> Value {
        let request = tokens::count(&json!({"name": name, "arguments": arguments}).to_string());
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        let started = Instant::now();
        let outcome = self
            .catalog
            .call(name, arguments, &context())
            .expect("the shop has the tool");
        self.time += started.elapsed();
        self.calls += 1;
        assert!(!outcome.is_error, "{name}: {}", outcome.joined_text());
        let exchange = request + tokens::count(&outcome.joined_text());
        self.tokens += exchange;
        self.exchanges.push(exchange);
        outcome.structured_content.unwrap_or(Value::Null)
    }

    /// Every order, page by page.
    pub fn all_orders(&mut self) -> Vec<Value> {
        let mut orders = Vec::new();
        let mut page = json!(1);
        while !page.is_null() {
            let listed = self.call("list_orders", &json!({ "page": page }));
            orders.extend(listed["orders"].as_array().cloned().unwrap_or_default());
            page = listed["next"].clone();
        }
        orders
    }
}

fn context() -> CallContext {
    CallContext::detached(Duration::from_mins(1))
}

fn total(order: &Value) -> i64 {
    order["quantity"].as_i64().unwrap_or(0) * order["unit_price"].as_i64().unwrap_or(0)
}

const PAGES: &str = "orders = []\npage = 1\nfor _ in range(100):\n    listed = tools.list_orders(page = page)\n    orders += listed[\"orders\"]\n    if listed[\"next\"] == None:\n        break\n    page = listed[\"next\"]\n";

/// The five tasks.
#[expect(
    clippy::too_many_lines,
    reason = "five tasks, each program beside its direct steps"
)]
pub fn tasks() -> Vec<Task> {
    vec![
        Task {
            name: "revenue by region (3 pages)",
            after_pages: "totals = {}\nfor o in orders:\n    totals[o[\"region\"]] = totals.get(o[\"region\"], 0) + o[\"quantity\"] * o[\"unit_price\"]\ntotals\n",
            direct: |calls| {
                let mut totals = JsonObject::new();
                for order in calls.all_orders() {
                    let region = order["region"].as_str().unwrap_or_default().to_owned();
                    let sum =
                        totals.get(&region).and_then(Value::as_i64).unwrap_or(0) + total(&order);
                    totals.insert(region, json!(sum));
                }
                Value::Object(totals)
            },
        },
        Task {
            name: "top 3 customers by spend, with names",
            after_pages: concat!(
                "spend = {}\nfor o in orders:\n    spend[o[\"customer\"]] = spend.get(o[\"customer\"], 0) + o[\"quantity\"] * o[\"unit_price\"]\n",
                "top = sorted(spend.items(), key = lambda kv: (-kv[1], kv[0]))[:3]\n",
                "{\"top\": [{\"name\": tools.get_customer(id = c)[\"name\"], \"spend\": s} for c, s in top]}\n"
            ),
            direct: |calls| {
                let mut spend: Vec<(i64, i64)> = Vec::new();
                for order in calls.all_orders() {
                    let customer = order["customer"].as_i64().unwrap_or(0);
                    match spend.iter_mut().find(|(id, _)| *id == customer) {
                        Some((_, sum)) => *sum += total(&order),
                        None => spend.push((customer, total(&order))),
                    }
                }
                spend.sort_by_key(|(id, sum)| (-sum, *id));
                let top: Vec<Value> = spend
                    .iter()
                    .take(3)
                    .map(|(id, sum)| {
                        let customer = calls.call("get_customer", &json!({ "id": id }));
                        json!({"name": customer["name"], "spend": sum})
                    })
                    .collect();
                json!({ "top": top })
            },
        },
        Task {
            name: "pending orders with product names",
            after_pages: concat!(
                "names = {}\npending = []\nfor o in orders:\n    if o[\"status\"] == \"pending\":\n        if o[\"product\"] not in names:\n            names[o[\"product\"]] = tools.get_product(id = o[\"product\"])[\"name\"]\n        pending.append({\"order\": o[\"id\"], \"product\": names[o[\"product\"]]})\n",
                "{\"pending\": pending}\n"
            ),
            direct: |calls| {
                let mut names: Vec<(i64, Value)> = Vec::new();
                let mut pending = Vec::new();
                for order in calls.all_orders() {
                    if order["status"] != "pending" {
                        continue;
                    }
                    let product = order["product"].as_i64().unwrap_or(0);
                    let known = names.iter().find(|(id, _)| *id == product);
                    let name = if let Some((_, name)) = known {
                        name.clone()
                    } else {
                        let name =
                            calls.call("get_product", &json!({ "id": product }))["name"].clone();
                        names.push((product, name.clone()));
                        name
                    };
                    pending.push(json!({"order": order["id"], "product": name}));
                }
                json!({ "pending": pending })
            },
        },
        Task {
            name: "summary line of all orders",
            after_pages: concat!(
                "totals = [o[\"quantity\"] * o[\"unit_price\"] for o in orders]\n",
                "\"%d orders, %d in all, largest %d\" % (len(totals), sum(totals), max(totals))\n"
            ),
            direct: |calls| {
                let totals: Vec<i64> = calls.all_orders().iter().map(total).collect();
                let largest = totals.iter().copied().max().unwrap_or(0);
                json!(format!(
                    "{} orders, {} in all, largest {largest}",
                    totals.len(),
                    totals.iter().sum::<i64>()
                ))
            },
        },
        Task {
            name: "low-stock products sold in the north",
            after_pages: concat!(
                "ids = sorted({o[\"product\"]: 1 for o in orders if o[\"region\"] == \"north\"}.keys())\n",
                "low = [p[\"name\"] for p in [tools.get_product(id = i) for i in ids] if p[\"stock\"] < 5]\n",
                "{\"low_stock\": low}\n"
            ),
            direct: |calls| {
                let mut ids: Vec<i64> = calls
                    .all_orders()
                    .iter()
                    .filter(|order| order["region"] == "north")
                    .filter_map(|order| order["product"].as_i64())
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                let low: Vec<Value> = ids
                    .iter()
                    .map(|id| calls.call("get_product", &json!({ "id": id })))
                    .filter(|product| product["stock"].as_i64().unwrap_or(0) < 5)
                    .map(|product| product["name"].clone())
                    .collect();
                json!({ "low_stock": low })
            },
        },
    ]
}

/// What one task cost each way.
#[derive(Debug, Clone)]
pub struct Measured {
    /// The task's name.
    pub name: &'static str,
    /// Direct calls made.
    pub direct_calls: usize,
    /// Tokens through the model, direct.
    pub direct_tokens: usize,
    /// Tool time, direct.
    pub direct_time: Duration,
    /// The model's input over the whole task, direct: every turn reads the definitions and
    /// every exchange before it (one turn per call, and one to answer).
    pub direct_context: usize,
    /// Tokens through the model, code mode.
    pub code_tokens: usize,
    /// The model's input over the whole task, code mode: the turn that writes the program
    /// and the turn that reads its result.
    pub code_context: usize,
    /// The `run_code` call's time.
    pub code_time: Duration,
}

/// The shop served twice: every tool listed (direct), and `mode = "only"` (code).
pub struct Shop {
    _dir: tempfile::TempDir,
    direct: Arc<Catalog>,
    code: Arc<Catalog>,
}

impl Shop {
    /// Writes the fixture to a temporary folder and loads it.
    ///
    /// # Panics
    ///
    /// When the fixture does not load.
    #[must_use]
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(dir.path().join("shop.star"), SHOP).expect("write shop.star");
        let folder = ToolFolder::load(dir.path()).expect("the shop loads");
        assert!(
            folder.catalog().diagnostics().is_empty(),
            "{:?}",
            folder.catalog().diagnostics()
        );
        let direct = Arc::clone(folder.catalog());
        let settings = EvaluatorSettings {
            enabled: true,
            mode: EvaluatorMode::Only,
            ..EvaluatorSettings::default()
        };
        let code = toolsmith_code::with_evaluator(Arc::clone(&direct), &settings);
        Self {
            _dir: dir,
            direct,
            code,
        }
    }

    /// Runs `task` both ways; the answers must agree.
    ///
    /// # Panics
    ///
    /// When `run_code` fails or the two answers differ.
    #[must_use]
    pub fn measure(&self, task: &Task) -> Measured {
        let listed_direct: usize = self.direct.definitions().map(tokens::cost).sum();
        let mut calls = Calls {
            catalog: &self.direct,
            tokens: listed_direct,
            exchanges: Vec::new(),
            calls: 0,
            time: Duration::ZERO,
        };
        let direct_answer = (task.direct)(&mut calls);

        let listed_code: usize = self
            .code
            .definitions()
            .filter(|definition| !definition.discoverable)
            .map(tokens::cost)
            .sum();
        let request = json!({"name": RUN_CODE, "arguments": {"code": task.program()}});
        let arguments = request["arguments"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let started = Instant::now();
        let outcome = self
            .code
            .call(RUN_CODE, arguments, &context())
            .expect("the evaluator is served");
        let code_time = started.elapsed();
        assert!(
            !outcome.is_error,
            "{}: {}",
            task.name,
            outcome.joined_text()
        );
        let code_answer = match outcome.structured_content.clone() {
            Some(Value::Object(mut object))
                if object.len() == 1 && object.contains_key("result") =>
            {
                object.remove("result").unwrap_or(Value::Null)
            }
            Some(value) => value,
            None => Value::String(outcome.content_text_first()),
        };
        assert_eq!(code_answer, direct_answer, "{}: both ways agree", task.name);
        let exchange = tokens::count(&request.to_string()) + tokens::count(&outcome.joined_text());
        Measured {
            name: task.name,
            direct_calls: calls.calls,
            direct_tokens: calls.tokens,
            direct_context: context_over_turns(listed_direct, &calls.exchanges),
            direct_time: calls.time,
            code_tokens: listed_code + exchange,
            code_context: context_over_turns(listed_code, &[exchange]),
            code_time,
        }
    }
}

impl Default for Shop {
    fn default() -> Self {
        Self::new()
    }
}

/// What a model reads over one turn per exchange plus a last one to answer, each turn
/// reading the definitions and every exchange before it.
fn context_over_turns(definitions: usize, exchanges: &[usize]) -> usize {
    let mut read = 0;
    let mut so_far = definitions;
    read += so_far;
    for exchange in exchanges {
        so_far += exchange;
        read += so_far;
    }
    read
}

/// The first text block of an outcome: a program's string value.
trait FirstText {
    fn content_text_first(&self) -> String;
}

impl FirstText for toolsmith_model::CallOutcome {
    fn content_text_first(&self) -> String {
        self.content
            .iter()
            .find_map(|block| match block {
                toolsmith_model::Content::Text { text, .. } => Some(text.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }
}

/// The results as the Markdown table of docs/code-mode.md.
#[must_use]
pub fn table(measured: &[Measured]) -> String {
    let mut lines = vec![
        "| task | direct calls | tokens direct | tokens run_code | saved | input over all turns, direct | input over all turns, run_code | direct tool time | run_code time |".to_owned(),
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|".to_owned(),
    ];
    for row in measured {
        #[expect(clippy::cast_precision_loss, reason = "token counts far below 2^52")]
        let saved = 1.0 - row.code_tokens as f64 / row.direct_tokens.max(1) as f64;
        lines.push(format!(
            "| {} | {} | {} | {} | {:.0} % | {} | {} | {:.1} ms | {:.1} ms |",
            row.name,
            row.direct_calls,
            row.direct_tokens,
            row.code_tokens,
            saved * 100.0,
            row.direct_context,
            row.code_context,
            row.direct_time.as_secs_f64() * 1e3,
            row.code_time.as_secs_f64() * 1e3,
        ));
    }
    lines.join("\n")
}
