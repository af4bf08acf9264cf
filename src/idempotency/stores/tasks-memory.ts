/**
 * Tasks of the memory store: a map in this process. Each task is kept as its JSON text, so what
 * comes back is a copy and a result JSON cannot carry is refused at create, as the SQL backends do.
 */
import { isFinalStatus, patchedTask, staleDue, type TaskRecord, type TaskStore } from "../tasks.js";
import { DEFAULT_LIST_LIMIT } from "./rows.js";

export function memoryTasks(open: () => void): TaskStore {
  const tasks = new Map<string, string>();
  const read = (id: string, now: number): TaskRecord | null => {
    const text = tasks.get(id);
    if (text === undefined) return null;
    const task = JSON.parse(text) as TaskRecord;
    if (task.expires_at > now) return task;
    tasks.delete(id);
    return null;
  };
  return {
    async create(record) {
      open();
      if (tasks.has(record.id)) throw new Error(`task ${record.id} already exists; task ids are single-use`);
      tasks.set(record.id, JSON.stringify(record));
    },
    async get(id, now) {
      open();
      return read(id, now);
    },
    async update(id, from, patch, fence) {
      open();
      const task = read(id, patch.now);
      if (!task || !from.includes(task.status)) return null;
      if (fence?.updated_before !== undefined && !(task.updated_at < fence.updated_before)) return null;
      const next = patchedTask(task, patch);
      tasks.set(id, JSON.stringify(next));
      return next;
    },
    async list({ owner, after, limit, now }) {
      open();
      const out: TaskRecord[] = [];
      for (const id of [...tasks.keys()].sort()) {
        if (after !== undefined && id <= after) continue;
        const task = read(id, now);
        if (task?.owner === owner) out.push(task);
        if (out.length >= (limit ?? DEFAULT_LIST_LIMIT)) break;
      }
      return out;
    },
    async stale({ before, now, limit }) {
      open();
      const out: TaskRecord[] = [];
      for (const id of [...tasks.keys()]) {
        const task = read(id, now);
        if (task && !isFinalStatus(task.status) && task.updated_at < before && staleDue(task) <= now) out.push(task);
      }
      out.sort((a, b) => staleDue(a) - staleDue(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return out.slice(0, limit ?? DEFAULT_LIST_LIMIT);
    },
  };
}
