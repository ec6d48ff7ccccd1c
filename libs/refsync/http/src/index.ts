export {
  createProblemDetailsFormatter,
  PROBLEM_JSON,
  problemDetailsFormatter,
  toProblemDetails,
  type ProblemDetailsOptions,
} from './problem-details';
