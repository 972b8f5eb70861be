//! The code-mode benchmark's tasks reach the same answer both ways, and one
//! `run_code` call passes fewer tokens through the model than the direct calls.

use toolsmith_bench::code_mode::{Shop, tasks};

#[test]
fn every_task_agrees_and_code_mode_costs_fewer_tokens() {
    let shop = Shop::new();
    let tasks = tasks();
    assert!(tasks.len() >= 5);
    for task in &tasks {
        let measured = shop.measure(task);
        assert!(
            measured.direct_calls >= 3,
            "{}: a multi-step task",
            task.name
        );
        assert!(
            measured.code_tokens < measured.direct_tokens,
            "{}: {measured:?}",
            task.name
        );
    }
}
