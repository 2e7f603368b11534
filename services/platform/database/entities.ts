import { ApiKey, Merchant } from "../../merchants/entities.ts";
import { Plan } from "../../catalog/entities.ts";
import { Event } from "../../events/entities.ts";

/** Every entity of every domain; one ORM instance knows them all. */
export const entities = [Merchant, ApiKey, Plan, Event];
